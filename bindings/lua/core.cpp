// The C module `drun.core`: models, data sets and trainers as userdata. It
// translates and validates nothing itself: Lua tables become JSON and the C++
// constructors check them. The pure-Lua module `drun` builds the user-facing
// API on top of these functions.
#include <memory>

#include "binding.hpp"
#include "data/cifar10.hpp"
#include "data/csv.hpp"
#include "data/fashion_mnist.hpp"
#include "data/pipeline.hpp"
#include "distributed/all_reduce.hpp"
#include "distributed/hogwild.hpp"
#include "distributed/ps_server.hpp"
#include "distributed/ps_worker.hpp"
#include "hooks.hpp"
#include "keras/keras_h5.hpp"
#include "lua_json.hpp"
#include "nn/model.hpp"
#include "train/evaluator.hpp"
#include "train/preemption.hpp"
#include "train/trainer.hpp"

namespace drun::lua {

namespace {

constexpr const char* kModel = "drun.Model";
constexpr const char* kDataset = "drun.Dataset";
constexpr const char* kTrainer = "drun.Trainer";

using ModelPtr = std::shared_ptr<nn::Model>;
using DatasetPtr = std::shared_ptr<const data::Dataset>;

struct TrainerBox {
  ModelPtr model;  // keeps the model alive as long as its trainer
  train::Trainer trainer;
  std::unique_ptr<distributed::Strategy> strategy;
  train::CompileOptions compiled;
  TrainerBox(ModelPtr m, const train::CompileOptions& c, const kernels::Exec& ex)
      : model(std::move(m)), trainer(*model, c, ex), compiled(c) {}
};

void push_shape(lua_State* L, const Shape& s) {
  lua_createtable(L, s.rank(), 0);
  for (int i = 0; i < s.rank(); ++i) {
    lua_pushnumber(L, static_cast<double>(s[i]));
    lua_rawseti(L, -2, i + 1);
  }
}

// ---- models ----

int model_new(lua_State* L) {
  return guarded(L, [&] {
    const json spec = to_json(L, 1, "model");
    const auto seed = static_cast<uint64_t>(luaL_optnumber(L, 2, 0));
    auto model = std::make_shared<nn::Model>(spec, seed);
    model->set_exec(context(L).exec);
    push_object(L, std::move(model), kModel);
    return 1;
  });
}

int model_summary(lua_State* L) {
  return guarded(L, [&] {
    lua_pushstring(L, check_object<nn::Model>(L, 1, kModel)->summary().c_str());
    return 1;
  });
}

int model_param_count(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, static_cast<double>(check_object<nn::Model>(L, 1, kModel)->param_count()));
    return 1;
  });
}

int model_output_shape(lua_State* L) {
  return guarded(L, [&] {
    push_shape(L, check_object<nn::Model>(L, 1, kModel)->output_shape());
    return 1;
  });
}

int model_input_shape(lua_State* L) {
  return guarded(L, [&] {
    push_shape(L, check_object<nn::Model>(L, 1, kModel)->input_shape());
    return 1;
  });
}

int model_spec(lua_State* L) {
  return guarded(L, [&] {
    push_json(L, check_object<nn::Model>(L, 1, kModel)->spec());
    return 1;
  });
}

// model:save(path, trainer|nil): Keras HDF5; with the model's trainer, its
// training_config (loss, metrics, optimizer) too.
int model_save(lua_State* L) {
  return guarded(L, [&] {
    auto& model = check_object<nn::Model>(L, 1, kModel);
    const std::string path = luaL_checkstring(L, 2);
    json training = nullptr;
    if (!lua_isnoneornil(L, 3)) {
      auto& box = check_object<TrainerBox>(L, 3, kTrainer);
      json metrics = json::array();
      for (const auto& m : box->compiled.metrics) metrics.push_back(m);
      training = {{"loss", box->compiled.loss},
                  {"metrics", metrics},
                  {"weighted_metrics", nullptr},
                  {"loss_weights", nullptr},
                  {"optimizer_config", box->trainer.optimizer().config()}};
    }
    keras::save_model(*model, path, training);
    return 0;
  });
}

int model_save_weights(lua_State* L) {
  return guarded(L, [&] {
    keras::save_weights(*check_object<nn::Model>(L, 1, kModel), luaL_checkstring(L, 2));
    return 0;
  });
}

int model_load_weights(lua_State* L) {
  return guarded(L, [&] {
    keras::load_weights(*check_object<nn::Model>(L, 1, kModel), luaL_checkstring(L, 2),
                        lua_toboolean(L, 3) != 0);
    return 0;
  });
}

int core_load_model(lua_State* L) {
  return guarded(L, [&] {
    auto model = keras::load_model(luaL_checkstring(L, 1));
    model->set_exec(context(L).exec);
    push_object(L, std::move(model), kModel);
    return 1;
  });
}

// ---- data sets ----

std::string data_dir(lua_State* L, int index) {
  if (!lua_isnoneornil(L, index)) return luaL_checkstring(L, index);
  return context(L).data_dir;
}

int dataset_fashion_mnist(lua_State* L) {
  return guarded(L, [&] {
    const std::string split = luaL_checkstring(L, 1);
    auto ds =
        std::make_shared<const data::Dataset>(data::load_fashion_mnist(split, data_dir(L, 2)));
    push_object(L, DatasetPtr(std::move(ds)), kDataset);
    return 1;
  });
}

// core.cifar10(split, dir|nil, shard): with shard, this worker's part only.
int dataset_cifar10(lua_State* L) {
  return guarded(L, [&] {
    const std::string split = luaL_checkstring(L, 1);
    const auto& ctx = context(L);
    const bool shard = lua_toboolean(L, 3) != 0 && ctx.workers && ctx.workers->size() > 1;
    auto ds = std::make_shared<const data::Dataset>(data::load_cifar10(
        split, data_dir(L, 2), shard ? ctx.workers->size() : 1, shard ? ctx.workers->rank() : 0));
    push_object(L, DatasetPtr(std::move(ds)), kDataset);
    return 1;
  });
}

int dataset_csv(lua_State* L) {
  return guarded(L, [&] {
    const std::string path = luaL_checkstring(L, 1);
    Options o(lua_isnoneornil(L, 2) ? json::object() : to_json(L, 2), "data.csv");
    o.maybe<std::string>("path");
    const auto opts = data::parse_csv_options(o);
    o.finish();
    push_object(L, DatasetPtr(std::make_shared<const data::Dataset>(data::read_csv(path, opts))),
                kDataset);
    return 1;
  });
}

// Nested Lua tables of numbers -> a tensor; labels that are all integers in a
// flat list become int32 class ids.
Tensor tensor_from_json(const json& v, bool labels, const std::string& what) {
  std::vector<int64_t> dims;
  const json* cur = &v;
  while (cur->is_array()) {
    if (cur->empty()) throw UsageError(what + ": empty list");
    dims.push_back(static_cast<int64_t>(cur->size()));
    cur = &(*cur)[0];
  }
  if (dims.empty()) throw UsageError(what + ": expected a list of numbers");
  const bool ints =
      labels && dims.size() == 1 &&
      std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer(); });
  Tensor t(Shape(dims), ints ? DType::i32 : DType::f32);
  int64_t i = 0;
  std::function<void(const json&, size_t)> fill = [&](const json& node, size_t depth) {
    if (depth == dims.size()) {
      if (!node.is_number()) throw UsageError(what + ": non-numeric value " + node.dump());
      if (ints)
        t.i32()[i++] = node.get<int32_t>();
      else
        t.f32()[i++] = node.get<float>();
      return;
    }
    if (!node.is_array() || static_cast<int64_t>(node.size()) != dims[depth])
      throw UsageError(what + ": ragged nested list (not every row has " +
                       std::to_string(dims[depth]) + " entries)");
    for (const auto& e : node) fill(e, depth + 1);
  };
  fill(v, 0);
  if (!ints && labels && dims.size() == 1) return t.reshaped(Shape{dims[0], 1});
  return t;
}

int dataset_arrays(lua_State* L) {
  return guarded(L, [&] {
    data::Dataset ds;
    ds.x = tensor_from_json(to_json(L, 1, "x"), false, "data.arrays x");
    ds.y = tensor_from_json(to_json(L, 2, "y"), true, "data.arrays y");
    data::check_dataset(ds, "data.arrays");
    push_object(L, DatasetPtr(std::make_shared<const data::Dataset>(std::move(ds))), kDataset);
    return 1;
  });
}

int dataset_size(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L,
                   static_cast<double>(check_object<const data::Dataset>(L, 1, kDataset)->size()));
    return 1;
  });
}

int dataset_shape(lua_State* L) {
  return guarded(L, [&] {
    push_shape(L, check_object<const data::Dataset>(L, 1, kDataset)->x.shape().drop_batch());
    return 1;
  });
}

// The pipeline of a data set and its ops; with shards > 1, this worker's shard.
std::unique_ptr<data::Pipeline> pipeline_arg(lua_State* L, int ds_index, int ops_index,
                                             int shards = 1, int shard = 0) {
  auto& ds = check_object<const data::Dataset>(L, ds_index, kDataset);
  const json ops = lua_isnoneornil(L, ops_index) ? json::array() : to_json(L, ops_index, "ops");
  auto spec = data::parse_pipeline_ops(ops.is_array() ? ops : json::array());
  if (shards > 1 && !ds->sharded) {
    if (spec.shard_count != 1)
      throw UsageError(
          "the training input is sharded over the workers already; remove its shard()");
    spec.shard_count = shards;
    spec.shard_index = shard;
  }
  return std::make_unique<data::Pipeline>(ds, spec);
}

// The strategy of a multi-worker job, from its Lua description {name, options}.
std::unique_ptr<distributed::Strategy> make_strategy(const distributed::StrategySpec& spec,
                                                     const train::Context& ctx,
                                                     const json& experiment_optimizer) {
  switch (spec.exchange) {
    case distributed::Exchange::all_reduce:
      return std::make_unique<distributed::AllReduce>(*ctx.workers, spec.bucket_bytes,
                                                      spec.shared_memory);
    case distributed::Exchange::shared:
      return std::make_unique<distributed::Hogwild>(*ctx.comm, *ctx.workers, spec);
    default:
      return std::make_unique<distributed::PsWorker>(*ctx.comm, *ctx.workers, spec,
                                                     experiment_optimizer);
  }
}

// A parameter-server rank's fit: serve the workers until they are done.
json serve(const distributed::StrategySpec& spec, const train::Context& ctx, nn::Model& model,
           const json& experiment_optimizer, const std::string& model_dir) {
  if (!spec.uses_servers())
    throw UsageError("this rank is a parameter server, but strategy " + spec.name + " uses none");
  const auto params = model.params();
  if (spec.exchange == distributed::Exchange::shared)
    return distributed::serve_hogwild(*ctx.comm, spec, params);
  return distributed::ParameterServer(*ctx.comm, spec, params, experiment_optimizer, model_dir)
      .serve();
}

// ---- trainers ----

int trainer_new(lua_State* L) {
  return guarded(L, [&] {
    auto& model = check_object<nn::Model>(L, 1, kModel);
    Options o(to_json(L, 2, "compile"), "compile");
    train::CompileOptions c;
    c.loss = o.require<json>("loss");
    c.optimizer = o.get<json>("optimizer", c.optimizer);
    c.metrics = o.get<std::vector<std::string>>("metrics", {});
    o.finish();
    push_object(L, std::make_shared<TrainerBox>(model, c, context(L).exec), kTrainer);
    return 1;
  });
}

json evaluation_json(const train::Evaluation& e) {
  json j = {{"loss", e.loss}, {"examples", e.examples}};
  for (const auto& [k, v] : e.metrics) j[k] = v;
  return j;
}

// trainer:fit(train_ds, train_ops, eval_ds|nil, eval_ops|nil, {epochs, steps, model_dir,
// strategy, save_checkpoints_steps, save_checkpoints_secs, keep_checkpoint_max,
// save_summary_steps}, hooks|nil)
int trainer_fit(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_object<TrainerBox>(L, 1, kTrainer);
    Options o(to_json(L, 6, "fit"), "fit");
    train::FitConfig cfg;
    cfg.epochs = o.get<int64_t>("epochs", 1);
    cfg.max_steps = o.get<int64_t>("steps", -1);
    cfg.model_dir = o.get<std::string>("model_dir", "");
    cfg.save_checkpoints_steps = o.get<int64_t>("save_checkpoints_steps", 0);
    cfg.save_checkpoints_secs = o.get<double>("save_checkpoints_secs", 0);
    cfg.keep_checkpoint_max = o.get<int>("keep_checkpoint_max", 5);
    cfg.save_summary_steps = o.get<int64_t>("save_summary_steps", 0);
    cfg.eval_every_steps = o.get<int64_t>("eval_every_steps", 0);
    cfg.eval_steps = o.get<int64_t>("eval_steps", -1);
    const json strategy = o.get<json>("strategy", json::object());
    o.finish();
    if (cfg.epochs < 1) throw UsageError("fit: epochs must be at least 1");
    if (cfg.save_checkpoints_steps < 0 || cfg.save_checkpoints_secs < 0 ||
        cfg.save_summary_steps < 0 || cfg.eval_every_steps < 0)
      throw UsageError("fit: checkpoint, summary and evaluation intervals must not be negative");
    auto& ctx = context(L);
    const auto spec = distributed::parse_strategy(strategy);
    if (ctx.role == "ps") {
      push_json(L, serve(spec, ctx, *box->model, box->compiled.optimizer, cfg.model_dir));
      return 1;
    }
    if (ctx.role == "evaluator") {
      if (lua_isnoneornil(L, 4))
        throw UsageError("the evaluator needs an evaluation input (eval_input / validation_data)");
      auto eval_input = pipeline_arg(L, 4, 5);
      train::Progress progress(ctx.tty, ctx.quiet);
      push_json(L, train::run_evaluator(box->trainer, *eval_input,
                                        {cfg.model_dir, cfg.eval_steps, 0.5}, progress));
      return 1;
    }
    const auto hooks = hooks_from_lua(L, 7);
    for (const auto& h : hooks) cfg.hooks.push_back(h.get());
    const int workers = ctx.workers ? ctx.workers->size() : 1;
    const bool servers = ctx.comm && ctx.comm->size() > workers;
    const bool chief = ctx.role == "chief";
    std::unique_ptr<distributed::Strategy> fresh;
    if ((workers > 1 || servers) && !box->strategy)
      fresh = make_strategy(spec, ctx, box->compiled.optimizer);
    // A checkpoint in model_dir: continue from it, on every rank, before the
    // strategy hands the chief's variables to the others.
    const auto resumed = box->trainer.restore(cfg.model_dir, [&](const std::string& warning) {
      if (chief) std::fprintf(stderr, "drun: warning: %s\n", warning.c_str());
    });
    if (resumed && chief)
      std::fprintf(stderr, "drun: resuming from %s/ckpt-%lld.h5 (epoch %lld, batch %lld)\n",
                   cfg.model_dir.c_str(), static_cast<long long>(resumed->global_step),
                   static_cast<long long>(resumed->epoch + 1),
                   static_cast<long long>(resumed->batch));
    if (fresh) {
      box->strategy = std::move(fresh);
      if (resumed) box->strategy->resume_from(resumed->global_step);
      box->trainer.set_strategy(box->strategy.get());
      // Linear scaling (Goyal et al. 2017) where this worker applies the mean
      // of all workers' gradients; servers scale their own optimizer.
      if (spec.scale_lr && spec.exchange == distributed::Exchange::all_reduce)
        box->trainer.optimizer().set_lr_scale(static_cast<float>(workers));
    }
    auto train_input = pipeline_arg(L, 2, 3, workers, ctx.workers ? ctx.workers->rank() : 0);
    std::unique_ptr<data::Pipeline> eval_input;
    if (!lua_isnoneornil(L, 4)) eval_input = pipeline_arg(L, 4, 5);
    train::Progress progress(ctx.tty, ctx.quiet);
    const auto r = box->trainer.fit(*train_input, eval_input.get(), cfg, progress);
    // Parameter servers return when a fit ends: a later fit starts afresh
    // with new ones (the servers' ranks serve again from their own fit call).
    if (box->strategy && spec.uses_servers()) {
      box->trainer.set_strategy(nullptr);
      box->strategy.reset();
    }
    if (r.preempted) {
      ctx.exit_code = train::kPreemptedExitCode;
      throw UsageError("preempted at step " + std::to_string(r.global_step) +
                       (cfg.model_dir.empty() ? "; no model_dir, so nothing was saved"
                                              : "; checkpoint written to " + cfg.model_dir +
                                                    ", rerun the same command to resume"));
    }
    push_json(L, r.to_json());
    return 1;
  });
}

int trainer_evaluate(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_object<TrainerBox>(L, 1, kTrainer);
    auto input = pipeline_arg(L, 2, 3);
    push_json(L, evaluation_json(box->trainer.evaluate(
                     *input, static_cast<int64_t>(luaL_optnumber(L, 4, -1)))));
    return 1;
  });
}

int trainer_predict(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_object<TrainerBox>(L, 1, kTrainer);
    auto input = pipeline_arg(L, 2, 3);
    const Tensor out = box->trainer.predict(*input);
    const int64_t rows = out.dim(0), cols = out.numel() / std::max<int64_t>(1, rows);
    lua_createtable(L, static_cast<int>(rows), 0);
    for (int64_t r = 0; r < rows; ++r) {
      lua_createtable(L, static_cast<int>(cols), 0);
      for (int64_t c = 0; c < cols; ++c) {
        lua_pushnumber(L, out.f32()[r * cols + c]);
        lua_rawseti(L, -2, static_cast<int>(c + 1));
      }
      lua_rawseti(L, -2, static_cast<int>(r + 1));
    }
    return 1;
  });
}

int trainer_global_step(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(
        L, static_cast<double>(check_object<TrainerBox>(L, 1, kTrainer)->trainer.global_step()));
    return 1;
  });
}

// ---- process ----

int core_context(lua_State* L) {
  return guarded(L, [&] {
    const auto& ctx = context(L);
    json j = {{"threads", ctx.exec.threads},
              {"data_dir", ctx.data_dir},
              {"tty", ctx.tty},
              {"rank", ctx.comm ? ctx.comm->rank() : 0},
              {"workers", ctx.workers ? ctx.workers->size() : 1},
              {"host", ctx.comm ? ctx.comm->host() : std::string("localhost")},
              {"role", ctx.role},
              {"task_index", ctx.task_index},
              {"tf_config", ctx.tf_config},
              {"plan", ctx.plan},
              {"device", device_name(ctx.exec.device)}};
    if (ctx.exec.device != Device::cpu) {
      j["gpu"] = ctx.gpu;
      j["gpu_name"] = kernels::cuda_device_name(ctx.gpu);
    }
    push_json(L, j);
    return 1;
  });
}

// core.plan_fit(model, strategy): in plan mode, what a fit would run.
int core_plan_fit(lua_State* L) {
  return guarded(L, [&] {
    auto& model = check_object<nn::Model>(L, 1, kModel);
    auto& ctx = context(L);
    json strategy = lua_isnoneornil(L, 2) ? json::object() : to_json(L, 2, "strategy");
    ctx.plan_record["strategy"] = strategy.value("name", std::string("AllReduce"));
    ctx.plan_record["strategy_options"] = strategy.value("options", json::object());
    ctx.plan_record["model_summary"] = model->summary();
    return 0;
  });
}

// core.fail(msg): a Lua-side validation error, located at the user's script.
int core_fail(lua_State* L) {
  const std::string msg = user_location(L) + luaL_checkstring(L, 1);
  lua_pushstring(L, msg.c_str());
  return lua_error(L);
}

const luaL_Reg model_methods[] = {{"summary", model_summary},
                                  {"param_count", model_param_count},
                                  {"output_shape", model_output_shape},
                                  {"input_shape", model_input_shape},
                                  {"spec", model_spec},
                                  {"save", model_save},
                                  {"save_weights", model_save_weights},
                                  {"load_weights", model_load_weights},
                                  {nullptr, nullptr}};
const luaL_Reg dataset_methods[] = {
    {"size", dataset_size}, {"shape", dataset_shape}, {nullptr, nullptr}};
const luaL_Reg trainer_methods[] = {{"fit", trainer_fit},
                                    {"evaluate", trainer_evaluate},
                                    {"predict", trainer_predict},
                                    {"global_step", trainer_global_step},
                                    {nullptr, nullptr}};
const luaL_Reg core_functions[] = {{"model", model_new},
                                   {"fashion_mnist", dataset_fashion_mnist},
                                   {"cifar10", dataset_cifar10},
                                   {"csv", dataset_csv},
                                   {"arrays", dataset_arrays},
                                   {"trainer", trainer_new},
                                   {"context", core_context},
                                   {"fail", core_fail},
                                   {"plan_fit", core_plan_fit},
                                   {"load_model", core_load_model},
                                   {nullptr, nullptr}};

}  // namespace

int open_core(lua_State* L) {
  define_type<nn::Model>(L, kModel, model_methods);
  define_type<const data::Dataset>(L, kDataset, dataset_methods);
  define_type<TrainerBox>(L, kTrainer, trainer_methods);
  lua_newtable(L);
  luaL_register(L, nullptr, core_functions);
  return 1;
}

}  // namespace drun::lua
