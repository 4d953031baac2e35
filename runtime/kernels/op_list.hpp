// The list of the backend's ops, one DRUN_OP line each: the one place an op's
// signature is written. From it come
//   - the ops themselves (ops.hpp declares them, ops.cpp defines each: its
//     checks, the check that every tensor argument is on the op's device,
//     and the hand-off to the GPU backend or the CPU side, on_cpu::<op>,
//     declared in cpu/ops_cpu.hpp),
//   - the GPU backend interface (gpu_backend.hpp: one pure virtual per op),
//   - the emulated GPU of the tests (tests/unit/emulated: each op on host
//     views of its tensors).
// Adding an op means: its line here; its CPU side (on_cpu::<op> in
// cpu/ops_cpu.cpp, over a kernel in cpu/); its CUDA side (the CudaBackend
// override in cuda/ops_cuda.cpp, over a kernel in cuda/); its case in the
// cross-backend harness (tests/unit/cuda/backend_harness_test.cpp). A missing
// side does not build: on_cpu::<op> is declared from here and the backend is
// abstract; a missing case fails the harness's EveryOpHasACase.
//
// DRUN_OP(return type, name, (parameters), (arguments), device, checks)
//   arguments: the parameters' names, to forward them;
//   device:    the Exec the op runs on;
//   checks:    an expression run before any backend, in ops.cpp, over the
//              parameters (`op` is the op's name): what would otherwise
//              corrupt memory. Shapes are the callers' to check (layers know
//              the names users see).
//
// No include guard: define DRUN_OP, include this file, undefine DRUN_OP.
// Every op takes tensors on one device (kernels/ops.hpp, Exec); where two
// tensors may alias it says so.

// Waits until every kernel launched on ex's device has finished.
DRUN_OP(void, synchronize, (const Exec& ex), (ex), ex, none())

// Mixed precision: the GEMM and the convolutions also take float16 or
// bfloat16 operands (the layers' copies, nn/layer.hpp compute_dtype): a
// float32 operand beside one of those is rounded to its type, products are
// summed in float32 (the GPU's tensor cores), results are float32; the
// convolutions' results pass through the compute type first (cuDNN writes
// them in it), the bias is added in float32. The CPU's side of these is
// kernels/mixed_reference.hpp.

// y = op(a) op(b) * alpha + beta * y, with a, b, y seen as matrices (rows =
// leading dimension, or as given by m/n/k). With beta 0, y is not read.
DRUN_OP(void, matmul,
        (const Exec& ex, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
         const Tensor& a, const Tensor& b, float beta, Tensor& y),
        (ex, trans_a, trans_b, m, n, k, alpha, a, b, beta, y), ex, none())

// y (rows, cols) = x (rows, in) w (in, cols) + b (cols, added to every row):
// a Dense layer's forward, a recurrent layer's input projection. x and w
// may be float16 or bfloat16 as matmul's; b and y are float32. y is not read.
DRUN_OP(void, affine,
        (const Exec& ex, int64_t rows, int64_t in, int64_t cols, const Tensor& x, const Tensor& w,
         const Tensor& b, Tensor& y),
        (ex, rows, in, cols, x, w, b, y), ex, none())

// matmul over a grid of matrices inside a, b and y (kernels/types.hpp,
// BatchedGemm), float32: attention's per-head products, each head read in
// place from its projection. With beta 0, y is not read.
DRUN_OP(void, batched_matmul,
        (const Exec& ex, const BatchedGemm& g, float alpha, const Tensor& a, const Tensor& b,
         float beta, Tensor& y),
        (ex, g, alpha, a, b, beta, y), ex, check_batched_matmul(op, g, a, b, y))
// Attention's softmax over the last axis (kernels/masked_softmax.hpp):
// y = softmax(scale * x), rows seen as (..., t, s); with `causal`, column j
// of row i (i = row index mod t) is left out where j > i. Backward: dx =
// scale * y * (dy - sum(dy * y)). x and y, dy and dx may alias.
DRUN_OP(void, masked_softmax_forward,
        (const Exec& ex, float scale, bool causal, int64_t t, const Tensor& x, Tensor& y),
        (ex, scale, causal, t, x, y), ex, check_rows_of(op, t, x, y))
DRUN_OP(void, masked_softmax_backward,
        (const Exec& ex, float scale, const Tensor& y, const Tensor& dy, Tensor& dx),
        (ex, scale, y, dy, dx), ex, same_size(op, y, dy, dx))

// Rows of y += b.
DRUN_OP(void, bias_add, (const Exec& ex, Tensor& y, const Tensor& b), (ex, y, b), ex, none())

// s = the sums of x's columns, over its leading rows.
DRUN_OP(void, column_sums, (const Exec& ex, const Tensor& x, Tensor& s), (ex, x, s), ex, none())

// y = act(x), elementwise or (softmax) over the last dimension; x and y may alias.
DRUN_OP(void, activation_forward, (const Exec& ex, ActivationFn a, const Tensor& x, Tensor& y),
        (ex, a, x, y), ex, same_size(op, x, y))

// dx = dy * act'(x) from the forward's output y and, where the activation
// reads it (a.reads_input()), its input x; otherwise x may be an empty
// tensor. dx and dy may alias.
DRUN_OP(void, activation_backward,
        (const Exec& ex, ActivationFn a, const Tensor& x, const Tensor& y, const Tensor& dy,
         Tensor& dx),
        (ex, a, x, y, dy, dx), ex, check_activation_backward(op, a, x, y, dy, dx))

// y = a + b.
DRUN_OP(void, add, (const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y), (ex, a, b, y), ex,
        same_size(op, a, b, y))

// y = max(0, a + b): an Add followed by a ReLU, fused (nn::Model decides where).
DRUN_OP(void, add_relu, (const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y),
        (ex, a, b, y), ex, same_size(op, a, b, y))

// dx = a + b where y > 0, else 0: the gradient at a ReLU's input, y its
// output, summed from two consumers in one pass (nn::Model decides where).
DRUN_OP(void, add_relu_backward,
        (const Exec& ex, const Tensor& a, const Tensor& b, const Tensor& y, Tensor& dx),
        (ex, a, b, y, dx), ex, same_size(op, a, b, y, dx))

// y += alpha x.
DRUN_OP(void, axpy, (const Exec& ex, float alpha, const Tensor& x, Tensor& y), (ex, alpha, x, y),
        ex, same_size(op, x, y))

// y *= alpha.
DRUN_OP(void, scale, (const Exec& ex, float alpha, Tensor& y), (ex, alpha, y), ex, none())

// y *= alpha[0], alpha one float32 on y's device: a factor that changes
// between the replays of a captured step (the loss scale).
DRUN_OP(void, scale_by, (const Exec& ex, const Tensor& alpha, Tensor& y), (ex, alpha, y), ex,
        check_scalar(op, "factor", alpha))

// y = value, every element (float32).
DRUN_OP(void, fill, (const Exec& ex, float value, Tensor& y), (ex, value, y), ex, none())

// y = a * b, elementwise.
DRUN_OP(void, mul, (const Exec& ex, const Tensor& a, const Tensor& b, Tensor& y), (ex, a, b, y), ex,
        same_size(op, a, b, y))

// Dropout's key for the next forward: `stored` (two int32 on ex's device) = key.
DRUN_OP(void, dropout_set_key, (const Exec& ex, uint64_t key, Tensor& stored), (ex, key, stored),
        ex, check_key(op, stored))
// Dropout's forward (kernels/dropout.hpp): mask = 1 / keep or 0 for each
// value, drawn from (the key in `stored`, its index), the same on every
// backend and split; y = x * mask. x and y may alias.
DRUN_OP(void, dropout_forward,
        (const Exec& ex, const Tensor& stored, float keep, const Tensor& x, Tensor& mask,
         Tensor& y),
        (ex, stored, keep, x, mask, y), ex, (check_key(op, stored), same_size(op, x, mask, y)))

// y = x in y's element type (float32, float16 or bfloat16; kernels/cast.hpp),
// rounded to nearest even where y's is narrower; a copy where the types agree.
DRUN_OP(void, cast, (const Exec& ex, const Tensor& x, Tensor& y), (ex, x, y), ex,
        check_cast(op, x, y))

// flag (one float32) = 1 where x has a value that is not finite; otherwise
// flag is left as it is. Does not wait: checks of many tensors into one flag
// cost one wait, when the flag is read (the loss scale's check of every
// gradient, optim/optimizer.cpp).
DRUN_OP(void, mark_nonfinite, (const Exec& ex, const Tensor& x, Tensor& flag), (ex, x, flag), ex,
        check_flag(op, flag))

// Convolutions, NHWC x HWIO (kernels/types.hpp, ConvGeometry). The workspace
// is conv2d_workspace_floats(ex, g) floats on ex's device. A convolution
// without bias passes an undefined b (no bias added) and db (none computed):
// on a GPU that saves a pass over y each way; the CPU's engines add zeros.
DRUN_OP(int64_t, conv2d_workspace_floats, (const Exec& ex, const ConvGeometry& g), (ex, g), ex,
        none())
// y = conv(x, w) + b, then ReLU where `relu` (fused). With `moments` (sized
// (N, 2, CO) by the caller), the statistics a following batch norm needs,
// taken while each image's output is still in cache: image n's per-channel
// mean of y, then its sum of squared deviations from that mean. Returns
// whether it wrote them: the CPU's implicit-GEMM engine does; CUDA and the
// CPU's direct and im2col engines do not.
DRUN_OP(bool, conv2d_forward,
        (const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b,
         Tensor& y, bool relu, Tensor& workspace, Tensor* moments),
        (ex, g, x, w, b, y, relu, workspace, moments), ex, none())
// dw, db (overwritten) from dy; relu_y: the forward's ReLU output to mask dy
// with, fused (nullptr: dy as is). Beside a narrow x, dy may be in x's type
// already (rounded once for this and conv2d_backward_data), without relu_y
// and db.
DRUN_OP(void, conv2d_backward_filter,
        (const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& dy,
         const Tensor* relu_y, Tensor& dw, Tensor& db, Tensor& workspace),
        (ex, g, x, dy, relu_y, dw, db, workspace), ex, check_rounded_dy(op, x, dy, relu_y, db))
// dx (overwritten) from dy (beside a narrow w, float32 or in w's type).
DRUN_OP(void, conv2d_backward_data,
        (const Exec& ex, const ConvGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx,
         Tensor& workspace),
        (ex, g, dy, w, dx, workspace), ex, none())
// A first convolution and the max pooling after it, one pass each way where
// the backend has a kernel for that (nn::Model decides where to ask): y =
// max_pool(relu?(conv(x, w) + b)) for pool geometry pg over the
// convolution's output, argmax as max_pool_forward's. Returns false, having
// written nothing, where it has none (CUDA; the CPU outside
// conv2d_direct_max_pool_suits or float32): the caller then runs
// conv2d_forward and max_pool_forward. The workspace as conv2d_forward's.
DRUN_OP(bool, conv2d_max_pool_forward,
        (const Exec& ex, const ConvGeometry& g, const PoolGeometry& pg, const Tensor& x,
         const Tensor& w, const Tensor& b, Tensor& y, Tensor& argmax, bool relu, Tensor& workspace),
        (ex, g, pg, x, w, b, y, argmax, relu, workspace), ex, none())
// dw, db (overwritten) from the pooled gradient dy, after a
// conv2d_max_pool_forward that returned true; relu_y: its output y where it
// applied a ReLU (nullptr: dy as is).
DRUN_OP(void, conv2d_max_pool_backward_filter,
        (const Exec& ex, const ConvGeometry& g, const PoolGeometry& pg, const Tensor& x,
         const Tensor& dy, const Tensor& argmax, const Tensor* relu_y, Tensor& dw, Tensor& db,
         Tensor& workspace),
        (ex, g, pg, x, dy, argmax, relu_y, dw, db, workspace), ex, none())

// Pooling, NHWC (PoolGeometry). Max pooling records in argmax (int32, the
// shape of y) the input pixel (iy * W + ix) that won, the first maximum in
// window order; its backward scatters dy there. Average pooling leaves the
// padding out of the average, as Keras. Backward passes overwrite dx.
DRUN_OP(void, max_pool_forward,
        (const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y, Tensor& argmax),
        (ex, g, x, y, argmax), ex, none())
DRUN_OP(void, max_pool_backward,
        (const Exec& ex, const PoolGeometry& g, const Tensor& dy, const Tensor& argmax, Tensor& dx),
        (ex, g, dy, argmax, dx), ex, none())
DRUN_OP(void, avg_pool_forward, (const Exec& ex, const PoolGeometry& g, const Tensor& x, Tensor& y),
        (ex, g, x, y), ex, none())
DRUN_OP(void, avg_pool_backward,
        (const Exec& ex, const PoolGeometry& g, const Tensor& dy, Tensor& dx), (ex, g, dy, dx), ex,
        none())
// (N, H, W, C) -> (N, C) and back.
DRUN_OP(void, global_avg_pool_forward, (const Exec& ex, const Tensor& x, Tensor& y), (ex, x, y), ex,
        none())
DRUN_OP(void, global_avg_pool_backward, (const Exec& ex, const Tensor& dy, Tensor& dx),
        (ex, dy, dx), ex, none())

// Depthwise convolutions, NHWC, float32 (DepthwiseConv2D, SeparableConv2D):
// the geometry's co is c * the depth multiplier m, and input channel ci
// alone feeds outputs ci * m ... ci * m + m - 1, each through its own kh x kw
// filter. w is Keras' (KH, KW, C, M), the same memory as (KH, KW, CO). b
// undefined: no bias. dx and dw are overwritten; the bias gradient is
// column_sums of dy.
DRUN_OP(void, depthwise_conv2d_forward,
        (const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b,
         Tensor& y),
        (ex, g, x, w, b, y), ex, check_depthwise(op, g, x, w, y, &b))
DRUN_OP(void, depthwise_conv2d_backward_data,
        (const Exec& ex, const ConvGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx),
        (ex, g, dy, w, dx), ex, check_depthwise(op, g, dx, w, dy, nullptr))
DRUN_OP(void, depthwise_conv2d_backward_filter,
        (const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw),
        (ex, g, x, dy, dw), ex, check_depthwise(op, g, x, dw, dy, nullptr))

// y[place] = beta * y[place] + x[place] (summed over g's sum dimensions) for
// each element of g's iteration (kernels/types.hpp, CopyGeometry): the shape
// layers' data movement. With beta 0, y is not read. x and y must not overlap.
DRUN_OP(void, strided_copy,
        (const Exec& ex, const CopyGeometry& g, const Tensor& x, float beta, Tensor& y),
        (ex, g, x, beta, y), ex, check_copy(op, g, x, y))

// Batch normalisation over the last axis (kernels/batchnorm.hpp states the
// formulas). Training normalises with the batch statistics, keeps them in
// mean/inv_std for backward and moves the moving statistics by `momentum`.
// With `relu` the output is max(0, y): a ReLU that follows the batch norm,
// fused (nn::Model decides where). `moments`, when not null, are x's
// per-image moments as conv2d_forward gives them: the batch statistics are
// combined from those instead of from a pass over x (CUDA reads x all the same).
DRUN_OP(void, batchnorm_forward_train,
        (const Exec& ex, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
         float momentum, Tensor& moving_mean, Tensor& moving_var, Tensor& mean, Tensor& inv_std,
         Tensor& y, bool relu, const Tensor* moments),
        (ex, x, gamma, beta, eps, momentum, moving_mean, moving_var, mean, inv_std, y, relu,
         moments),
        ex, none())
DRUN_OP(void, batchnorm_forward_infer,
        (const Exec& ex, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
         const Tensor& moving_mean, const Tensor& moving_var, Tensor& y, bool relu),
        (ex, x, gamma, beta, eps, moving_mean, moving_var, y, relu), ex, none())
// dx, dgamma, dbeta overwritten. With batch_statistics the mean and variance
// depend on x (training); otherwise they are constants. relu_y, when not
// null, is the fused forward's output: dy is first masked where the ReLU was
// closed (the CPU recomputes that mask from x, gamma and beta, one read of
// the activations fewer; CUDA reads relu_y).
DRUN_OP(void, batchnorm_backward,
        (const Exec& ex, const Tensor& x, const Tensor& dy, const Tensor* relu_y,
         const Tensor& gamma, const Tensor& beta, const Tensor& mean, const Tensor& inv_std,
         bool batch_statistics, Tensor& dx, Tensor& dgamma, Tensor& dbeta),
        (ex, x, dy, relu_y, gamma, beta, mean, inv_std, batch_statistics, dx, dgamma, dbeta), ex,
        none())

// Layer normalisation over the last axis (kernels/layer_norm.hpp states the
// formula): each row by its own statistics, kept in mean/inv_std (one per
// row) for backward; training and inference alike. gamma or beta undefined:
// scale 1 or shift 0 (Keras' scale=false, center=false).
DRUN_OP(void, layer_norm_forward,
        (const Exec& ex, const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
         Tensor& mean, Tensor& inv_std, Tensor& y),
        (ex, x, gamma, beta, eps, mean, inv_std, y), ex,
        check_layer_norm(op, x, gamma, beta, mean, inv_std, y))
// dx, dgamma, dbeta overwritten; each may be undefined (not computed).
DRUN_OP(void, layer_norm_backward,
        (const Exec& ex, const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
         const Tensor& inv_std, Tensor& dx, Tensor& dgamma, Tensor& dbeta),
        (ex, x, dy, gamma, mean, inv_std, dx, dgamma, dbeta), ex,
        (check_layer_norm(op, x, gamma, dbeta, mean, inv_std, dy), same_size(op, x, dx),
         same_size(op, gamma, dgamma)))

// Embedding (kernels/embedding.hpp): ids (float32 holding integers, or
// int32) pick rows of a (rows, dim) table: y (ids..., dim) = table[ids].
// An id outside [0, rows) gives a zero row, never a read outside the table;
// the caller checks ids where it can see them (nn's Embedding, on the host).
DRUN_OP(void, embedding_gather, (const Exec& ex, const Tensor& ids, const Tensor& table, Tensor& y),
        (ex, ids, table, y), ex, check_embedding(op, ids, table, y))
// dtable = the rows of dy summed into the rows their ids name (overwritten);
// bad ids add nothing.
DRUN_OP(void, embedding_scatter_add,
        (const Exec& ex, const Tensor& ids, const Tensor& dy, Tensor& dtable),
        (ex, ids, dy, dtable), ex, check_embedding(op, ids, dtable, dy))

// loss (one float32) = the mean loss over the batch; grad = d(mean)/d(pred)
// (kernels/loss.hpp). Does not wait: the loss stays on ex's device until read.
// Sparse labels must lie in [0, classes) (nn::Loss checks them on the host);
// one outside gives a zero gradient row and a NaN loss.
DRUN_OP(void, loss_forward_backward,
        (const Exec& ex, LossKind kind, const Tensor& pred, const Tensor& target, Tensor& grad,
         Tensor& loss),
        (ex, kind, pred, target, grad, loss), ex, check_loss(op, kind, pred, target, grad, loss))

// sum (one float32) = the batch's sum of a metric (kernels/metric.hpp): hits
// for the accuracies (integer labels, one per row, for label_accuracy),
// errors for the others. Does not wait, as the loss.
DRUN_OP(void, metric_sum,
        (const Exec& ex, MetricKind kind, const Tensor& pred, const Tensor& target, Tensor& sum),
        (ex, kind, pred, target, sum), ex, check_metric(op, kind, pred, target, sum))

// Metrics from counts (kernels/metric_counts.hpp), each into float32 counts
// on ex's device; none waits. top_k_hits: sum (one value) = the rows whose
// label (int32 labels, one per row, or one-hot float32 targets) is among the
// k largest predictions. threshold_counts: counts (2 T + 2) = true and false
// positives above each of the T thresholds, then positives and negatives.
// bucket_counts: counts (2 B) = positives and negatives in each of Keras'
// AUC buckets. class_counts: counts (4 C) = F1's sums per class, above
// `threshold` or, without one, at each row's maximum.
DRUN_OP(void, top_k_hits,
        (const Exec& ex, int k, const Tensor& pred, const Tensor& target, Tensor& sum),
        (ex, k, pred, target, sum), ex, check_top_k(op, pred, target, sum))
DRUN_OP(void, threshold_counts,
        (const Exec& ex, const Thresholds& thresholds, const Tensor& pred, const Tensor& target,
         Tensor& counts),
        (ex, thresholds, pred, target, counts), ex,
        check_thresholds(op, thresholds, pred, target, counts))
DRUN_OP(void, bucket_counts,
        (const Exec& ex, const Tensor& pred, const Tensor& target, Tensor& counts),
        (ex, pred, target, counts), ex, check_counts(op, pred, target, counts, -2))
DRUN_OP(void, class_counts,
        (const Exec& ex, std::optional<float> threshold, const Tensor& pred, const Tensor& target,
         Tensor& counts),
        (ex, threshold, pred, target, counts), ex,
        check_counts(op, pred, target, counts, 4 * class_rows(pred.shape()).cols))

// Optimizer updates (kernels/optimizer_update.hpp gives each rule), on the
// device where w lives (the optimizer's Exec says so). Optional slots
// (AMSGrad's vhat, centered RMSprop's mg) are null when unused. `step` is
// the step's values (kStepValues float32 on w's device: the rate, the
// gradient's factor, the skip flag), read where the update runs: a captured
// step reads each replay's values from there.
DRUN_OP(void, sgd_update,
        (const Exec& ex, const Tensor& g, Tensor& w, const Tensor& step, float weight_decay),
        (ex, g, w, step, weight_decay), ex, check_update(op, g, w, step))
DRUN_OP(void, sgd_momentum_update,
        (const Exec& ex, const Tensor& g, Tensor& w, Tensor& v, const Tensor& step, float momentum,
         bool nesterov, float weight_decay),
        (ex, g, w, v, step, momentum, nesterov, weight_decay), ex, check_update(op, g, w, step))
DRUN_OP(void, adagrad_update,
        (const Exec& ex, const Tensor& g, Tensor& w, Tensor& acc, const Tensor& step, float epsilon,
         float weight_decay),
        (ex, g, w, acc, step, epsilon, weight_decay), ex, check_update(op, g, w, step))
DRUN_OP(void, adam_update,
        (const Exec& ex, const Tensor& g, Tensor& w, Tensor& m, Tensor& v, Tensor* vhat,
         const Tensor& step, float one_minus_beta_1, float one_minus_beta_2, float epsilon,
         float weight_decay),
        (ex, g, w, m, v, vhat, step, one_minus_beta_1, one_minus_beta_2, epsilon, weight_decay), ex,
        check_update(op, g, w, step))
DRUN_OP(void, rmsprop_update,
        (const Exec& ex, const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, const Tensor& step,
         float rho, float epsilon, float weight_decay),
        (ex, g, w, rms, mg, step, rho, epsilon, weight_decay), ex, check_update(op, g, w, step))
DRUN_OP(void, rmsprop_momentum_update,
        (const Exec& ex, const Tensor& g, Tensor& w, Tensor& rms, Tensor* mg, Tensor& mom,
         const Tensor& step, float rho, float momentum, float epsilon, float weight_decay),
        (ex, g, w, rms, mg, mom, step, rho, momentum, epsilon, weight_decay), ex,
        check_update(op, g, w, step))

// Keras' gradient clipping of g, in place, before an update
// (kernels/gradient_clip.hpp gives the formulas): `limit` is clipnorm,
// global_clipnorm or clipvalue; sum_squares (one float32, undefined for
// value) the sum of squares of g, or of every gradient for global_norm; step
// the update's values (its gradient factor says how g is scaled), read on the
// device as an update reads them.
DRUN_OP(void, clip_gradient,
        (const Exec& ex, GradientClip kind, float limit, const Tensor& sum_squares,
         const Tensor& step, Tensor& g),
        (ex, kind, limit, sum_squares, step, g), ex, check_clip(op, kind, sum_squares, step, g))
// Recurrent layers, one time step each (kernels/recurrent.hpp: the formulas
// and the layout). xp (B, T, G): every step's input projection, read at time
// t_x; dzx, the gradient there, has its layout. seq (B, T, U), where not null,
// gets h at time t_y; dseq, where not null, adds its gradient at t_y. States
// are (B, U); hr, the step's GEMM h_{t-1} R, and dz/dzr/dzh are (B, G); the
// gates kept for backward (B, 4U).
DRUN_OP(void, lstm_step_forward,
        (const Exec& ex, int64_t t_x, int64_t t_y, const Tensor& xp, const Tensor& hr,
         const Tensor& c_prev, Tensor& gates, Tensor& c, Tensor& h, Tensor* seq),
        (ex, t_x, t_y, xp, hr, c_prev, gates, c, h, seq), ex,
        check_rnn_step(op, 4, t_x, t_y, xp, h, seq, {&hr, &gates}, {&c_prev, &c}))
// dh: the gradient at h from the later steps (read); dc: in, at c from the
// later steps, out, at c_prev; dz (B, 4U): the gradient at the step's
// pre-activations, xp's and hr's alike (the layer's d(kernel) and d(input)
// come from the steps' dz, nn/lstm.cpp).
DRUN_OP(void, lstm_step_backward,
        (const Exec& ex, int64_t t_y, const Tensor* dseq, const Tensor& gates, const Tensor& c,
         const Tensor& c_prev, const Tensor& dh, Tensor& dc, Tensor& dz),
        (ex, t_y, dseq, gates, c, c_prev, dh, dc, dz), ex,
        check_lstm_step_backward(op, t_y, dseq, dh, {&gates, &dz}, {&c, &c_prev, &dc}))
// GRU: hr's z and r blocks are read; hh's recurrent part comes from hrh's
// h block (reset_after: hrh is hr, its recurrent bias added; before the
// reset: (r h_prev) R, gru_reset_forward's rh through the step's second GEMM).
DRUN_OP(void, gru_step_forward,
        (const Exec& ex, bool reset_after, int64_t t_x, int64_t t_y, const Tensor& xp,
         const Tensor& hr, const Tensor& hrh, const Tensor& h_prev, Tensor& gates, Tensor& h,
         Tensor* seq),
        (ex, reset_after, t_x, t_y, xp, hr, hrh, h_prev, gates, h, seq), ex,
        (check_rnn_step(op, 3, t_x, t_y, xp, h, seq, {&hr, &hrh}, {&h_prev}),
         check_rnn_gates(op, gates, h)))
DRUN_OP(void, gru_reset_forward,
        (const Exec& ex, int64_t t_x, const Tensor& xp, const Tensor& hr, const Tensor& h_prev,
         Tensor& rh),
        (ex, t_x, xp, hr, h_prev, rh), ex,
        check_rnn_step(op, 3, t_x, t_x, xp, rh, nullptr, {&hr}, {&h_prev}))
// dh: in, the gradient at h from the later steps; out, its direct part at
// h_prev. dzh (before the reset only, else null) and gru_reset_backward as
// kernels/recurrent.hpp says.
DRUN_OP(void, gru_step_backward,
        (const Exec& ex, bool reset_after, int64_t t_x, int64_t t_y, const Tensor* dseq,
         const Tensor& gates, const Tensor& h_prev, Tensor& dh, Tensor& dzx, Tensor& dzr,
         Tensor* dzh),
        (ex, reset_after, t_x, t_y, dseq, gates, h_prev, dh, dzx, dzr, dzh), ex,
        (check_rnn_step(op, 3, t_x, t_y, dzx, dh, dseq, {&dzr, dzh}, {&h_prev}),
         check_rnn_gates(op, gates, dh)))
DRUN_OP(void, gru_reset_backward,
        (const Exec& ex, int64_t t_x, const Tensor& gates, const Tensor& h_prev, const Tensor& drh,
         Tensor& dh, Tensor& dzx, Tensor& dzr),
        (ex, t_x, gates, h_prev, drh, dh, dzx, dzr), ex,
        (check_rnn_step(op, 3, t_x, t_x, dzx, dh, nullptr, {&dzr}, {&h_prev, &drh}),
         check_rnn_gates(op, gates, dh)))
// SimpleRNN: h = a(xp + hr), a elementwise with a backward from its output
// (kernels::simple_rnn_activation_ok).
DRUN_OP(void, simple_rnn_step_forward,
        (const Exec& ex, ActivationFn a, int64_t t_x, int64_t t_y, const Tensor& xp,
         const Tensor& hr, Tensor& h, Tensor* seq),
        (ex, a, t_x, t_y, xp, hr, h, seq), ex,
        (check_simple_rnn_activation(op, a),
         check_rnn_step(op, 1, t_x, t_y, xp, h, seq, {&hr}, {})))
DRUN_OP(void, simple_rnn_step_backward,
        (const Exec& ex, ActivationFn a, int64_t t_x, int64_t t_y, const Tensor* dseq,
         const Tensor& h, const Tensor& dh, Tensor& dz, Tensor& dzx),
        (ex, a, t_x, t_y, dseq, h, dh, dz, dzx), ex,
        (check_simple_rnn_activation(op, a),
         check_rnn_step(op, 1, t_x, t_y, dzx, h, dseq, {&dz}, {&dh})))
