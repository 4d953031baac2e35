// The hooks a script can ask for by name (drun.hooks), one DRUN_HOOK line
// each: DRUN_HOOK(id) is the hook whose file defines `const HookInfo&
// id_hook()` (train/hook_registry.hpp): its name, its options with their
// defaults and, for a hook that C++ runs, its constructor. Lua's drun.hooks
// checks its constructors' options against these entries (core.check) and
// takes their defaults from them; the API docs lint reads them there.
// Adding a hook means: its entry (in the file of its C++ side, or in
// train/hook_registry.cpp for a hook whose behaviour is drun.hooks' Lua), its
// line here, its Lua constructor where it has no C++ side, its test and its
// docs row.
//
// No include guard: define DRUN_HOOK, include this file, undefine it.
DRUN_HOOK(logging)
DRUN_HOOK(stop_at_step)
DRUN_HOOK(step_counter)
DRUN_HOOK(checkpoint_saver)
DRUN_HOOK(summary_saver)
DRUN_HOOK(nan_guard)
DRUN_HOOK(global_step_waiter)
DRUN_HOOK(final_ops)
