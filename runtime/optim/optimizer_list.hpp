// The optimizers, one DRUN_OPTIMIZER line each: DRUN_OPTIMIZER(id) is the
// optimizer whose file defines `const OptimizerInfo& id_optimizer()`
// (optim/optimizer.hpp): its Keras class name and other spellings, Keras'
// lowercase shorthand ('sgd'), its options with their defaults and its
// constructor. make_optimizer, Lua's drun.optim constructors, core.check and
// the API docs lint come from here; the order is that of make_optimizer's
// "valid classes: ...".
// Adding an optimizer means: its class and entry (optim/optimizers.cpp), its
// line here, its closed-form update test and its docs row.
//
// No include guard: define DRUN_OPTIMIZER, include this file, undefine it.
DRUN_OPTIMIZER(adagrad)
DRUN_OPTIMIZER(adam)
DRUN_OPTIMIZER(adamw)
DRUN_OPTIMIZER(rmsprop)
DRUN_OPTIMIZER(sgd)
DRUN_OPTIMIZER(loss_scale_optimizer)
