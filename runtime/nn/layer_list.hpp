// The layers, one DRUN_LAYER line each: DRUN_LAYER(id) is the layer whose
// file defines `const LayerInfo& id_layer()` (nn/layer_registry.hpp): its
// Keras class name and aliases, its options with their defaults, its
// positional parameters and its constructor. From this list come make_layer,
// the Keras importer's and exporter's classes, the layer names a model gives,
// Lua's drun.nn constructors and the API docs lint.
// Adding a layer means: its file (nn/<layer>.cpp, listed in nn/meson.build),
// its line here, its gradient test and its docs row.
//
// No include guard: define DRUN_LAYER, include this file, undefine DRUN_LAYER.
DRUN_LAYER(dense)
DRUN_LAYER(conv2d)
DRUN_LAYER(conv2d_transpose)
DRUN_LAYER(max_pooling2d)
DRUN_LAYER(average_pooling2d)
DRUN_LAYER(global_average_pooling2d)
DRUN_LAYER(flatten)
DRUN_LAYER(dropout)
DRUN_LAYER(activation)
DRUN_LAYER(relu)
DRUN_LAYER(softmax)
DRUN_LAYER(leaky_relu)
DRUN_LAYER(batch_normalization)
DRUN_LAYER(add)
DRUN_LAYER(conv1d)
DRUN_LAYER(depthwise_conv2d)
DRUN_LAYER(separable_conv2d)
DRUN_LAYER(max_pooling1d)
DRUN_LAYER(average_pooling1d)
DRUN_LAYER(global_average_pooling1d)
DRUN_LAYER(global_max_pooling1d)
DRUN_LAYER(global_max_pooling2d)
DRUN_LAYER(reshape)
DRUN_LAYER(permute)
DRUN_LAYER(repeat_vector)
DRUN_LAYER(concatenate)
DRUN_LAYER(multiply)
DRUN_LAYER(zero_padding2d)
DRUN_LAYER(cropping2d)
DRUN_LAYER(up_sampling2d)
DRUN_LAYER(layer_normalization)
DRUN_LAYER(embedding)
DRUN_LAYER(position_embedding)
DRUN_LAYER(multi_head_attention)
DRUN_LAYER(simple_rnn)
DRUN_LAYER(lstm)
DRUN_LAYER(gru)
DRUN_LAYER(bidirectional)
