// Counts heap allocations: linking allocation_counter.cpp into a test
// executable replaces every form of global operator new with one that counts
// while an AllocationCounter is alive. Used by the tests that check that a
// warm step allocates nothing.
#pragma once

namespace drun::testing {

class AllocationCounter {
 public:
  AllocationCounter();  // starts counting from zero
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  // Stops counting and returns the allocations seen.
  long stop();
};

}  // namespace drun::testing
