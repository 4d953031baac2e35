// The losses, one DRUN_LOSS line each: DRUN_LOSS(id) is the loss whose
// `const LossInfo& id_loss()` nn/loss.cpp defines (nn/loss.hpp): its Keras
// class name and Keras' snake_case names, its options and the kernels it
// runs. Loss, Lua's drun.losses constructors, core.check and the API docs
// lint come from here.
// Adding a loss means: its kernel (kernels' LossKind), its entry and line
// here, its gradient test and its docs row.
//
// No include guard: define DRUN_LOSS, include this file, undefine it.
DRUN_LOSS(sparse_categorical_crossentropy)
DRUN_LOSS(categorical_crossentropy)
DRUN_LOSS(binary_crossentropy)
DRUN_LOSS(mean_squared_error)
