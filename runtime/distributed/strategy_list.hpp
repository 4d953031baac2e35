// The strategies, one DRUN_STRATEGY line each: DRUN_STRATEGY(id) is the
// strategy whose file defines `const StrategyInfo& id_strategy()`
// (distributed/strategy_spec.hpp): its names, its options with their defaults,
// the command-line presets (--strategy ps_sync) and how its options fill a
// StrategySpec. parse_strategy, Lua's drun.strategy, the scripts' --strategy
// names, the docs lint and the strategy tests' list come from here.
// Adding a strategy means: its entry (in the file of its worker side, or in
// distributed/ps_strategies.cpp for another rule of the parameter-server
// family), its line here, its test and its docs row.
//
// No include guard: define DRUN_STRATEGY, include this file, undefine it.
DRUN_STRATEGY(all_reduce)
DRUN_STRATEGY(parameter_server)
DRUN_STRATEGY(dyn_sgd)
DRUN_STRATEGY(sync_sgd)
DRUN_STRATEGY(downpour)
DRUN_STRATEGY(downpour_easy)
DRUN_STRATEGY(hogwild)
DRUN_STRATEGY(agn)
DRUN_STRATEGY(sagn)
DRUN_STRATEGY(easgd)
DRUN_STRATEGY(aeasgd)
DRUN_STRATEGY(aeamsgd)
