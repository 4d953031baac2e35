// The callbacks a script can ask for by name (drun.callbacks, as
// keras.callbacks), one DRUN_CALLBACK line each: DRUN_CALLBACK(id) is the
// callback whose file defines `const CallbackInfo& id_callback()`
// (train/callbacks/callback_registry.hpp): its Keras name, its options with
// Keras' defaults and, where C++ runs it, its constructor. Lua's
// drun.callbacks makes its constructors from these entries and checks their
// options against them; the API docs lint reads them there.
//
// No include guard: define DRUN_CALLBACK, include this file, undefine it.
DRUN_CALLBACK(early_stopping)
DRUN_CALLBACK(reduce_lr_on_plateau)
DRUN_CALLBACK(model_checkpoint)
DRUN_CALLBACK(csv_logger)
DRUN_CALLBACK(learning_rate_scheduler)
DRUN_CALLBACK(terminate_on_nan)
