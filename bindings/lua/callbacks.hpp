// Callbacks given from Lua (fit{callbacks = {...}}): a table with
// _callback = NAME and _options = {...} (drun.callbacks' constructors)
// becomes the C++ callback of that name (train/callbacks/callback_list.hpp);
// any other table is the user's own, whose methods on_train_begin(self),
// on_epoch_begin(self, epoch), on_epoch_end(self, epoch, logs),
// on_train_batch_end(self, batch, logs), on_test_end(self, logs),
// on_train_end(self), get_state(self) and set_state(self, state) the loop
// calls where present. Before each call it sets self.learning_rate and
// self.stop_training = false; after it, a changed self.learning_rate sets the
// optimizer's rate and a true self.stop_training ends the fit (Keras'
// model.optimizer.learning_rate and model.stop_training).
#pragma once
#include <lua.hpp>
#include <memory>
#include <vector>

#include "train/callbacks/callback.hpp"

namespace drun::lua {

// The callbacks in the Lua array at `index` (nil: none). They refer to Lua
// values and live no longer than the call that made them.
std::vector<std::unique_ptr<train::Callback>> callbacks_from_lua(lua_State* L, int index);

}  // namespace drun::lua
