// The learning-rate schedules, one DRUN_SCHEDULE line each: DRUN_SCHEDULE(id)
// is the schedule whose file defines `const ScheduleInfo& id_schedule()`
// (optim/schedule.hpp): its Keras class name, its options with their
// defaults and its constructor. make_schedule, Lua's drun.optim.schedules,
// core.check and the API docs lint come from here, in this order.
// Adding a schedule means: its class and entry (optim/schedule.cpp), its line
// here, its test and its docs row.
//
// No include guard: define DRUN_SCHEDULE, include this file, undefine it.
DRUN_SCHEDULE(cosine_decay)
DRUN_SCHEDULE(exponential_decay)
DRUN_SCHEDULE(linear_warmup)
DRUN_SCHEDULE(piecewise_constant_decay)
