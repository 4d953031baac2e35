"""Models built and saved by Keras 3 itself, for drun.load_model to read.
Usage: keras_models.py OUTDIR  (run with the venv's python: tools/python_env)

Writes, for each model NAME (the functions main lists):
  OUTDIR/NAME.h5    Keras' legacy HDF5 format (model.save with a .h5 suffix)
  OUTDIR/NAME.json  {"inputs": [...], "outputs": [...]}: a fixed batch of 16
                    inputs (channels last; integers for tokens' int32
                    input) and Keras' predictions on it
and prints the names it wrote. Deterministic: the same files every run."""
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

BATCH = 16


def sequential():
    """Conv2D, BatchNormalization with moving statistics far from (0, 1),
    MaxPooling2D, Dropout, Flatten and two Dense: trained for an epoch, so the
    file carries a training_config and optimizer weights too."""
    model = keras.Sequential([
        keras.Input((28, 28, 1)),
        layers.Conv2D(8, 3, activation="relu"),
        layers.BatchNormalization(),
        layers.MaxPooling2D(2),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(16, activation="relu"),
        layers.Dense(10),
    ])
    rng = np.random.RandomState(1)
    x = rng.uniform(0, 1, (256, 28, 28, 1)).astype("float32")
    y = rng.randint(0, 10, 256)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    # A few training steps move the moving statistics only a little from
    # their initial (0, 1): set every batch-norm variable to something a
    # loader that dropped or swapped one of them would get visibly wrong.
    bn = next(l for l in model.layers if isinstance(l, layers.BatchNormalization))
    c = bn.gamma.shape[0]
    bn.set_weights([rng.uniform(0.5, 1.5, c).astype("float32"),       # gamma
                    rng.uniform(-0.5, 0.5, c).astype("float32"),      # beta
                    rng.uniform(-0.2, 0.6, c).astype("float32"),      # moving_mean
                    rng.uniform(0.05, 0.5, c).astype("float32")])     # moving_variance
    inputs = rng.uniform(0, 1, (BATCH, 28, 28, 1)).astype("float32")
    return model, inputs


def residual():
    """A functional residual block: two 3x3 convolutions ('same') added to a
    1x1 convolution of the input (3 -> 4 channels), ReLU, global average
    pooling and a Dense of 5."""
    inputs = keras.Input((8, 8, 3))
    a = layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    b = layers.Conv2D(4, 3, padding="same")(a)
    shortcut = layers.Conv2D(4, 1)(inputs)
    h = layers.ReLU()(layers.Add()([b, shortcut]))
    h = layers.GlobalAveragePooling2D()(h)
    outputs = layers.Dense(5)(h)
    model = keras.Model(inputs, outputs, name="resblock")
    rng = np.random.RandomState(2)
    # Biases are zero at initialisation: give every weight random values.
    model.set_weights([rng.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()])
    return model, rng.normal(0, 1, (BATCH, 8, 8, 3)).astype("float32")


# The activations of the MLP below, by the names Keras users write (Keras 3
# saves swish as silu; gelu is the exact one, hard_sigmoid relu6(x + 3) / 6).
ACTIVATIONS = ["elu", "selu", "softplus", "softsign", "swish", "silu", "gelu", "hard_sigmoid",
               "exponential", "leaky_relu", "relu", "sigmoid", "tanh", "linear"]


def activations():
    """A functional model whose branches each apply one activation to a Dense
    of the input -- a Dense of every activation in ACTIVATIONS, an Activation
    layer, LeakyReLU layers with Keras 3's default slope (0.3) and another --
    added up (Add) into a Dense of 4 logits, so that each activation reaches
    the output directly. Pre-activations spread over about [-6, 6] (both sides
    of every kink, hard_sigmoid's saturation included); the exponential's
    branch gets smaller weights so that it stays in range."""
    inputs = keras.Input((6,))
    branches = [layers.Dense(8, activation=a, name="dense_" + a)(inputs) for a in ACTIVATIONS]
    branches.append(layers.Activation("gelu")(layers.Dense(8)(inputs)))
    branches.append(layers.LeakyReLU()(layers.Dense(8)(inputs)))
    branches.append(layers.LeakyReLU(negative_slope=0.1)(layers.Dense(8)(inputs)))
    outputs = layers.Dense(4, name="logits")(layers.Add()(branches))
    model = keras.Model(inputs, outputs, name="activations")
    rng = np.random.RandomState(3)
    for layer in model.layers:
        if not layer.weights:
            continue
        scale = 0.1 if layer.name in ("dense_exponential", "logits") else 0.8
        layer.set_weights([rng.normal(0, scale if w.ndim == 2 else 0.3, w.shape).astype("float32")
                           for w in layer.get_weights()])
    return model, rng.normal(0, 1.5, (BATCH, 6)).astype("float32")


def shapes():
    """The shape layers and the 1-D ones in one functional model: padding,
    convolution, cropping and upsampling of images, Permute and Reshape into a
    sequence, a Dense over its last axis, causal and 'same' Conv1D, 1-D pooling, Multiply, Concatenate,
    the global poolings and RepeatVector, joined into a Dense of 3."""
    inputs = keras.Input((8, 6, 3))
    a = layers.ZeroPadding2D(((1, 0), (2, 1)))(inputs)
    a = layers.Conv2D(4, 3)(a)
    a = layers.Cropping2D(((1, 0), (0, 1)))(a)
    a = layers.UpSampling2D((1, 2))(a)
    seq = layers.Reshape((12, 24))(layers.Permute((2, 1, 3))(a))
    seq = layers.Dense(10, activation="tanh")(seq)  # over the last axis
    s1 = layers.MaxPooling1D(2)(layers.Conv1D(5, 3, padding="causal")(seq))
    s2 = layers.AveragePooling1D(2)(layers.Conv1D(5, 3, padding="same", activation="tanh")(seq))
    joined = layers.Concatenate()([layers.Multiply()([s1, s2]), s1])
    repeated = layers.Flatten()(layers.RepeatVector(2)(layers.GlobalMaxPooling2D()(a)))
    h = layers.Concatenate()([layers.GlobalMaxPooling1D()(joined),
                              layers.GlobalAveragePooling1D()(joined), repeated])
    model = keras.Model(inputs, layers.Dense(3)(h), name="shapes")
    rng = np.random.RandomState(4)
    # Small weights keep the logits near 1: the comparison is absolute (1e-5).
    model.set_weights([rng.normal(0, 0.2, w.shape).astype("float32") for w in model.get_weights()])
    return model, rng.normal(0, 1, (BATCH, 8, 6, 3)).astype("float32")


def tokens():
    """Token ids (an int32 Input of 12 ids below 50) through an Embedding of 8,
    LayerNormalization over each token's 8 values, Flatten and a Dense of 5.
    The layer norm's gamma and beta get random values (they start at 1 and
    0), and the inputs use every id from 0 to 49."""
    model = keras.Sequential([
        keras.Input((12,), dtype="int32"),
        layers.Embedding(50, 8),
        layers.LayerNormalization(),
        layers.Flatten(),
        layers.Dense(5),
    ], name="tokens")
    rng = np.random.RandomState(4)
    model.set_weights([rng.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()])
    ids = np.concatenate([np.arange(50), rng.randint(0, 50, BATCH * 12 - 50)])
    return model, ids.reshape(BATCH, 12).astype("int32")

def attention():
    """Causal self-attention (2 heads of 4) over 6 steps of 8 features, added
    to its input (a residual join), flattened into a Dense of 3: the call's
    use_causal_mask is in the file's node, not in the layer's config."""
    inputs = keras.Input((6, 8))
    y = layers.MultiHeadAttention(2, 4)(inputs, inputs, use_causal_mask=True)
    y = layers.Add()([inputs, y])
    outputs = layers.Dense(3)(layers.Flatten()(y))
    model = keras.Model(inputs, outputs, name="attention")
    rng = np.random.RandomState(4)
    model.set_weights([rng.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()])
    return model, rng.normal(0, 1, (BATCH, 6, 8)).astype("float32")

def recurrent():
    """LSTM, GRU after the reset (Keras 3) going backwards, GRU before it
    (Keras 2's default) and SimpleRNN, over (time, features) sequences:
    Keras' own initial kernels, the biases made non-zero so that each
    bias path counts."""
    model = keras.Sequential([
        keras.Input((10, 6)),
        layers.LSTM(8, return_sequences=True),
        layers.GRU(7, return_sequences=True, go_backwards=True),
        layers.GRU(6, reset_after=False, return_sequences=True),
        layers.SimpleRNN(5),
        layers.Dense(4),
    ], name="recurrent")
    rng = np.random.RandomState(4)
    for layer in model.layers:
        layer.set_weights([w if w.ndim == 2 and "bias" not in v.path else
                           (w + rng.normal(0, 0.2, w.shape)).astype("float32")
                           for w, v in zip(layer.get_weights(), layer.weights)])
    return model, rng.normal(0, 1, (BATCH, 10, 6)).astype("float32")

def decoder():
    """A small U-Net-like decoder: a stride-2 Conv2D down, a stride-2 'same'
    Conv2DTranspose back up joined to the input (the skip), then a 'valid'
    kernel-3 stride-2 one and, from the bottom, an even kernel 'same' with
    output_padding; every output pixel of both, flattened, is the output."""
    inputs = keras.Input((8, 8, 3))
    down = layers.Conv2D(6, 3, strides=2, padding="same", activation="relu")(inputs)
    up = layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu")(down)
    joined = layers.Concatenate()([up, inputs])
    valid = layers.Conv2DTranspose(2, 3, strides=2)(joined)
    padded = layers.Conv2DTranspose(2, 4, strides=2, padding="same", output_padding=1,
                                    activation="tanh")(down)
    outputs = layers.Concatenate()([layers.Flatten()(valid), layers.Flatten()(padded)])
    model = keras.Model(inputs, outputs, name="decoder")
    rng = np.random.RandomState(5)
    model.set_weights([rng.normal(0, 0.3, w.shape).astype("float32") for w in model.get_weights()])
    return model, rng.normal(0, 1, (BATCH, 8, 8, 3)).astype("float32")

def bidirectional():
    """Bidirectional LSTM returning sequences, concatenated, then a
    Bidirectional GRU returning its last states, summed: the backward copy's
    sequence is turned back in time before the merge. Keras' own initial
    kernels, the biases made non-zero."""
    model = keras.Sequential([
        keras.Input((7, 5)),
        layers.Bidirectional(layers.LSTM(6, return_sequences=True)),
        layers.Bidirectional(layers.GRU(4), merge_mode="sum"),
        layers.Dense(3),
    ], name="bidirectional")
    rng = np.random.RandomState(4)
    for layer in model.layers:
        layer.set_weights([w if w.ndim == 2 and "bias" not in v.path else
                           (w + rng.normal(0, 0.2, w.shape)).astype("float32")
                           for w, v in zip(layer.get_weights(), layer.weights)])
    return model, rng.normal(0, 1, (BATCH, 7, 5)).astype("float32")

def seq2seq():
    """An encoder-decoder: an LSTM encoder's final h and c (return_state)
    start a decoder LSTM (initial_state); a Bidirectional GRU's final states
    (forward, backward) join its output, a SimpleRNN started from one of them
    and the encoder's c in a Concatenate before a Dense. The encoder's
    sequence goes nowhere. Keras' own initial kernels, the biases non-zero."""
    inputs = keras.Input((6, 4))
    _, h, c = layers.LSTM(5, return_state=True)(inputs)
    seq = layers.LSTM(5, return_sequences=True)(inputs, initial_state=[h, c])
    out, fh, bh = layers.Bidirectional(layers.GRU(3, return_state=True))(seq)
    _, s = layers.SimpleRNN(3, return_state=True)(seq, initial_state=[fh])
    outputs = layers.Dense(4)(layers.Concatenate()([out, fh, bh, s, c]))
    model = keras.Model(inputs, outputs, name="seq2seq")
    rng = np.random.RandomState(6)
    for layer in model.layers:
        layer.set_weights([w if w.ndim == 2 and "bias" not in v.path else
                           (w + rng.normal(0, 0.2, w.shape)).astype("float32")
                           for w, v in zip(layer.get_weights(), layer.weights)])
    return model, rng.normal(0, 1, (BATCH, 6, 4)).astype("float32")

def mobilenet():
    """A MobileNet-like block: a 3x3 DepthwiseConv2D by Keras' positional
    shorthand (stride 2, 'same', depth multiplier 2, no bias),
    BatchNormalization, ReLU, a 1x1 Conv2D, a SeparableConv2D (depth
    multiplier 2, ReLU), a 'valid' DepthwiseConv2D with bias, global average
    pooling and a Dense; every weight random, the moving variance positive."""
    model = keras.Sequential([
        keras.Input((9, 9, 3)),
        layers.DepthwiseConv2D(3, 2, "same", 2, use_bias=False),
        layers.BatchNormalization(),
        layers.ReLU(),
        layers.Conv2D(8, 1),
        layers.SeparableConv2D(6, 3, padding="same", depth_multiplier=2, activation="relu"),
        layers.DepthwiseConv2D(3, activation="tanh"),
        layers.GlobalAveragePooling2D(),
        layers.Dense(4),
    ], name="mobilenet")
    rng = np.random.RandomState(5)
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            c = layer.gamma.shape[0]
            layer.set_weights([rng.uniform(0.5, 1.5, c).astype("float32"),
                               rng.uniform(-0.5, 0.5, c).astype("float32"),
                               rng.uniform(-0.2, 0.6, c).astype("float32"),
                               rng.uniform(0.05, 0.5, c).astype("float32")])
        else:
            layer.set_weights([rng.normal(0, 0.5, w.shape).astype("float32")
                               for w in layer.get_weights()])
    return model, rng.normal(0, 1, (BATCH, 9, 9, 3)).astype("float32")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    keras.utils.set_random_seed(42)
    for name, build in (("sequential", sequential), ("residual", residual),
                        ("activations", activations), ("shapes", shapes), ("tokens", tokens),
                        ("attention", attention), ("recurrent", recurrent),
                        ("decoder", decoder),
                        ("mobilenet", mobilenet),
                        ("bidirectional", bidirectional),
                        ("seq2seq", seq2seq)):
        model, x = build()
        model.save(os.path.join(out, name + ".h5"))
        y = model.predict(x, batch_size=BATCH, verbose=0).astype("float32")
        # float32 -> Python float is exact, and json writes the shortest text
        # that reads back as that double: the values round-trip bit for bit.
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump({"inputs": x.tolist(), "outputs": y.tolist()}, f)
        print(name, model.count_params())


if __name__ == "__main__":
    main()
