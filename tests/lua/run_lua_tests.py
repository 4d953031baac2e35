#!/usr/bin/python3
"""Command-line tests of build/drun: runs small Lua scripts (tests/lua/*.lua and
scripts/) and checks exit codes, the words of error messages and the files a
run writes. Standard library only.

Usage: run_lua_tests.py DRUN_EXE SOURCE_ROOT [--single-rank | --multi-rank] [CASE_NAME_SUBSTRING ...]

--single-rank runs only the cases of one process, --multi-rank only those that
start ranks through mpirun (drun -np N): meson registers them as two tests, the
second in the dist suite, so that a build whose ranks cannot be started (ppc64le
under qemu-user) leaves it out by suite. A cross build's environment gives
DRUN_EXE_WRAPPER (a JSON list, the emulator that runs DRUN_EXE) and
DRUN_TEST_TIME_SCALE (how much slower than native it is).
"""
import gzip
import json
import math
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import testlib  # noqa: E402
from testlib import Skip, run_cases, show, temp_dir  # noqa: E402

ROOT = os.path.abspath(sys.argv[2])
RANKS = [a for a in sys.argv[3:] if a in ("--single-rank", "--multi-rank")]
ONLY = [a for a in sys.argv[3:] if a not in RANKS]
DRUN = json.loads(os.environ.get("DRUN_EXE_WRAPPER", "[]")) + [os.path.abspath(sys.argv[1])]
HERE = os.path.join(ROOT, "tests", "lua")
FASHION_DIR = "/usr/share/datasets/fashion-mnist"
TIMEOUT = 60  # seconds a drun run may take (testlib.run stretches it by DRUN_TEST_TIME_SCALE)


def multi_rank(fn):
    """Marks a case that starts more than one rank (drun -np N, via mpirun)."""
    fn.multi_rank = True
    return fn


def run(args, cwd=None, env=None):
    """Runs drun with args (in env, default this process's); returns (rc, stdout, stderr)."""
    env = dict(os.environ if env is None else env, DRUN_THREADS="2")
    p = testlib.run(DRUN + args, TIMEOUT, cwd=cwd or ROOT, env=env)
    return p.returncode, p.stdout, p.stderr


def check_clean(rc, out, err):
    """No C++ crash: a normal exit status, no terminate / abort / core dump text."""
    assert rc >= 0, "killed by signal %d\n%s" % (-rc, show(rc, out, err))
    assert rc < 128, "exit code %d looks like a crash\n%s" % (rc, show(rc, out, err))
    both = out + err
    for bad in ("terminate called", "core dumped", "Aborted", "Segmentation fault",
                "what():"):
        assert bad not in both, "%r in the output\n%s" % (bad, show(rc, out, err))


def expect_error(args, words, patterns=(), cwd=None):
    """drun fails cleanly and its stderr has every word and matches every regex."""
    rc, out, err = run(args, cwd)
    check_clean(rc, out, err)
    assert rc != 0, "expected a failure\n" + show(rc, out, err)
    for w in words:
        assert w in err, "stderr lacks %r\n%s" % (w, show(rc, out, err))
    for pat in patterns:
        assert re.search(pat, err), "stderr does not match /%s/\n%s" % (pat, show(rc, out, err))
    return err


def expect_success(args, cwd=None, env=None):
    rc, out, err = run(args, cwd, env)
    check_clean(rc, out, err)
    assert rc == 0, "expected success\n" + show(rc, out, err)
    return out, err


# ---- cases ----

def test_syntax_error():
    # Lua reports syntax errors at load time, file and line first.
    expect_error(["syntax_error.lua"], ["unexpected symbol"], [r"syntax_error\.lua:3:"], cwd=HERE)


def test_runtime_error():
    expect_error(["runtime_error.lua"], ["attempt to index", "stack traceback:"],
                 [r"runtime_error\.lua:4:", r"runtime_error\.lua:7: in main chunk"], cwd=HERE)


def test_unknown_layer_option():
    # A usage error at the layer's own line: one line, exit 2, a near miss named.
    rc, out, err = run(["unknown_option.lua"], cwd=HERE)
    assert rc == 2 and "traceback" not in err and len(err.strip().splitlines()) == 1, \
        show(rc, out, err)
    assert re.search(r"unknown_option\.lua:6: .*'unitz' \(did you mean 'units'\?\)", err), err
    # The valid options are listed after the unknown one.
    assert re.search(r"unitz.*valid options:.*\bunits\b", err), err


def test_unknown_keys_everywhere():
    """Every option table of the Lua API refuses a key it does not know (the
    script walks every constructor the drun module exports)."""
    rc, out, err = run(["unknown_keys.lua"], cwd=HERE)
    check_clean(rc, out, err)
    assert rc == 0, show(rc, out, err)
    m = re.search(r"checked (\d+) tables", out)
    assert m and int(m.group(1)) >= 70, show(rc, out, err)


def test_unknown_cpu_kernel_variant():
    """DRUN_ISA naming a variant the CPU or build lacks is refused at start-up,
    naming the ones there are."""
    rc, out, err = run(["unknown_keys.lua"], cwd=HERE, env=dict(os.environ, DRUN_ISA="avx9"))
    check_clean(rc, out, err)
    assert rc == 1, show(rc, out, err)
    assert "DRUN_ISA=avx9" in err and "baseline" in err, show(rc, out, err)


def test_shape_mismatch():
    expect_error(["shape_mismatch.lua"], ["'conv2d_1'", "(None, 144)", "images"],
                 [r"shape_mismatch\.lua:\d+:"], cwd=HERE)


def test_unknown_script_option():
    err = expect_error(["scripts/fashion_mnist.lua", "--epoch", "3"], ["--epoch", "--epochs"])
    assert re.search(r"unknown option --epoch\b", err), err
    assert re.search(r"valid options:.*--epochs\b", err), err


def test_negative_example_limit():
    # A usage error before any data is read: one line, exit 2, no traceback.
    rc, out, err = run(["scripts/fashion_mnist.lua", "--eval-limit", "-1"])
    check_clean(rc, out, err)
    assert rc == 2, show(rc, out, err)
    assert "--eval-limit: expected 0 (all) or a number of examples, got -1" in err, err
    assert "traceback" not in err, err


def test_missing_data():
    expect_error(["--data-dir", "/nonexistent", "scripts/fashion_mnist.lua", "--epochs", "1"],
                 ["/nonexistent/", "dataset-fashion-mnist"])


def test_unknown_strategy():
    err = expect_error(["scripts/fashion_mnist.lua", "--strategy", "downpoor", "--epochs", "1"],
                       ["--strategy: unknown strategy downpoor", "did you mean 'downpour'",
                        "ps_async"])
    # The command line's mistake, not the script's: one line, no traceback.
    assert len(err.strip().splitlines()) == 1 and "traceback" not in err, err


def test_bad_strategy_option():
    # Checked in C++ with the strategy's name; the Lua line is the script's.
    err = expect_error(["bad_strategy.lua"], ["strategy.EASGD", "alpha must lie in (0, 1)"], cwd=HERE)
    assert re.search(r"bad_strategy\.lua:\d+:", err), err


def test_core_bad_arguments():
    # Wrong arguments to drun.core become clean errors at the script's line,
    # through the binding's one error path (no luaL_check* longjmp).
    for case, words in (("seed", ["model seed: expected a number, got string"]),
                        ("object", ["argument #1: expected a drun.Model, got table"]),
                        ("hooks", ["reading field '_builtin'", "no such field here"]),
                        ("cycle", ["nests tables more than 64 deep"]),
                        ("utf8", ["option 'model.name' is not valid UTF-8 text"]),
                        ("nan_key", ["1e+300"])):
        expect_error(["core_bad_argument.lua", case], words, [r"core_bad_argument\.lua:\d+:"],
                     cwd=HERE)


def test_hooks():
    with temp_dir("lua") as d:
        out, _ = expect_success(["hooks_test.lua", "--model-dir", d], cwd=HERE)
        # The Lua hook saw begin, every before/after in order, asked to stop at 6, and end_.
        steps = ",".join(f"before {i},after {i + 1}" for i in range(6))
        assert f"lua hook: began\ttrue\tsteps\t{steps}\tfinal\t6\tglobal_step\t6\tstopped_by_hook\ttrue" in out, out
        assert "StopAtStepHook last_step: global_step\t9" in out, out
        assert "StopAtStepHook num_steps: global_step\t5" in out, out
        # 3 epochs of 4 steps: LoggingHook logs steps 4, 8, 12.
        assert re.search(r"^step 4: loss = [\d.e+-]+, accuracy = [\d.e+-]+$", out, re.M), out
        assert "LoggingHook lines\t3" in out, out
        assert "StepCounterHook rates\t3\tpositive\ttrue" in out, out
        assert "FinalOpsHook value\ttrue" in out, out
        # The saver hooks: checkpoints at 5, 10 and the last step (12); summaries.
        assert "saver hooks: global_step\t12" in out, out
        files = sorted(os.listdir(d))
        assert {"ckpt-5.h5", "ckpt-10.h5", "ckpt-12.h5", "checkpoint"} <= set(files), files
        assert any(f.startswith("events.out.tfevents.") for f in files), files


def test_callbacks():
    with temp_dir("lua") as d:
        out, _ = expect_success(["callbacks_test.lua", "--model-dir", d], cwd=HERE)
        # A Lua callback: 3 epochs (it stopped after epoch 2), 12 batches, the
        # logs by Keras' names, its halved rate used from epoch 1 on.
        assert ("mine: epochs 0,1,2 batches 12 loss true keys accuracy,learning_rate,loss,"
                "val_accuracy,val_loss rates 0.10000000149012,0.050000000745058 epochs_run 3") in out, out
        assert "scheduler: 0.1,0.05,0.0333333" in out, out
        # EarlyStopping(patience 1) stops after epoch 1 (counted from 0); one
        # ModelCheckpoint file per epoch; the CSV's header and two rows.
        assert "early: epochs 2" in out, out
        files = sorted(f for f in os.listdir(d) if f.startswith("m-"))
        assert len(files) == 2 and files[0].startswith("m-01-") and files[1].startswith("m-02-"), files
        with open(os.path.join(d, "log.csv")) as f:
            rows = f.read().splitlines()
        assert rows[0] == "epoch,accuracy,learning_rate,loss,val_accuracy,val_loss", rows
        assert len(rows) == 3 and rows[2].startswith("1,"), rows
        assert "nan: stopped true" in out, out
        assert re.search(r"bad: true .*ReduceLROnPlateau.*factor", out), out


@multi_rank
def test_callbacks_two_workers():
    # 64 examples, 32 a worker, batch 8: 4 steps an epoch. Both workers stop
    # after epoch 3 (EarlyStopping, patience 3), each epoch's rate halved at
    # the ends of epochs 1, 2 and 3: the chief's decisions reached the other worker.
    for strategy in ("AllReduce", "ParameterServer"):
        out, _ = expect_success(["-np", "2", "callbacks_test.lua", "--case", "dist",
                                 "--strategy", strategy], cwd=HERE)
        lines = re.findall(r"dist (chief|worker): epochs (\d+) step (\d+) rates (\S+)", out)
        assert len(lines) == 2, out
        assert all(l[1:] == ("4", "16", "0.1,0.1,0.05,0.025") for l in lines), (strategy, out)
        # 2 epochs, then a rerun for 10 in the same model_dir: epochs 3 and 4
        # as above, from the callbacks' state in the checkpoint.
        with temp_dir("lua") as d:
            args = ["-np", "2", "callbacks_test.lua", "--case", "dist", "--strategy", strategy,
                    "--model-dir", d]
            expect_success(args + ["--epochs", "2"], cwd=HERE)
            out, _ = expect_success(args, cwd=HERE)
            lines = re.findall(r"dist (chief|worker): epochs (\d+) step (\d+) rates (\S+)", out)
            assert len(lines) == 2, out
            assert all(l[1:] == ("4", "16", "0.05,0.025") for l in lines), (strategy, out)


def test_eval_every_steps():
    out, _ = expect_success(["hooks_test.lua", "--case", "eval"], cwd=HERE)
    # 2 epochs of 4 steps: evaluations at steps 3 and 6, and after each epoch
    # (steps 4 and 8), each on eval_steps = 1 batch of 16.
    steps = re.findall(r"evaluation at step (\d+):", out)
    assert steps == ["3", "6"], out
    assert len(re.findall(r"epoch [12]/2 done .* - val_loss", out)) == 2, out
    assert "eval examples 16" in out, out


def test_nan_guard():
    err = expect_error(["hooks_test.lua", "--case", "nan"], ["NanGuard", "at step"], cwd=HERE)
    # It names the first layer with a non-finite output. Once in a CI run on
    # the emulated GPU (PUC Lua build) it found every output finite and said
    # the loss overflowed: accepted here, but only as NanGuard's other message.
    assert re.search(r"at step \d+; (first non-finite output: layer '\w+'|no layer output is "
                     r"non-finite \(the loss itself overflowed\))", err), err


@multi_rank
def test_global_step_waiter_needs_servers():
    # With AllReduce every worker counts its own steps: waiting would hang, so it is an error.
    # A fresh model_dir: the default one may hold a finished run, which would end at once.
    with temp_dir("lua") as d:
        expect_error(["-np", "2", "scripts/fashion_mnist.lua", "--epochs", "1", "--train-limit",
                      "640", "--delay-workers-by-global-step", "20", "--model-dir", d],
                     ["GlobalStepWaiterHook", "needs a parameter-server strategy"])


@multi_rank
def test_global_step_waiter():
    # Async parameter servers: worker 0 (rank 2) starts once the chief's updates
    # reach 40 (of the 100 steps each worker takes).
    with temp_dir("lua") as d:
        out, _ = expect_success(["-np", "2", "scripts/fashion_mnist.lua", "--epochs", "1",
                                 "--train-limit", "12800", "--strategy", "ps_async",
                                 "--delay-workers-by-global-step", "40", "--model-dir", d])
        m = re.search(r"GlobalStepWaiterHook: global step (\d+) >= 40 after", out)
        assert m and int(m.group(1)) >= 40, out
        # Asked to wait longer than the chief trains, a worker goes on when the chief is done.
        out, _ = expect_success(["-np", "2", "scripts/fashion_mnist.lua", "--epochs", "1",
                                 "--train-limit", "1280", "--strategy", "ps_async",
                                 "--delay-workers-by-global-step", "1000", "--model-dir",
                                 os.path.join(d, "second")])  # d's checkpoint would be resumed
        assert "the chief finished before global step 1000; going on" in out, out


@multi_rank
def test_two_fits_with_parameter_servers():
    out, _ = expect_success(["-np", "2", "two_fits_ps.lua"], cwd=HERE)
    # 64 examples, 32 per worker, batch 8: 4 steps an epoch, 2 epochs a fit.
    assert "fits done: steps 8 then 16" in out, out


def small_idx_labels(n=300):
    """An idx1 file of n unsigned-byte labels."""
    return bytes([0, 0, 8, 1]) + n.to_bytes(4, "big") + bytes(i % 10 for i in range(n))


def small_idx_images(n=300):
    return bytes([0, 0, 8, 3]) + b"".join(d.to_bytes(4, "big") for d in (n, 28, 28)) + \
        bytes((i * 7) % 256 for i in range(n * 28 * 28))


def test_truncated_idx_data():
    # A complete gzip stream whose idx content is shorter than its header says.
    with temp_dir("lua") as d:
        with gzip.open(os.path.join(d, "t10k-images-idx3-ubyte.gz"), "wb") as f:
            f.write(small_idx_images())
        bad = os.path.join(d, "t10k-labels-idx1-ubyte.gz")
        with gzip.open(bad, "wb") as f:
            f.write(small_idx_labels()[:200])
        expect_error(["--data-dir", d, "load_fashion_test.lua"], [bad, "truncated"], cwd=HERE)


def test_truncated_gzip_stream():
    # The gzip file itself is cut short.
    with temp_dir("lua") as d:
        with gzip.open(os.path.join(d, "t10k-labels-idx1-ubyte.gz"), "wb") as f:
            f.write(small_idx_labels())
        bad = os.path.join(d, "t10k-images-idx3-ubyte.gz")
        whole = gzip.compress(small_idx_images())
        with open(bad, "wb") as f:
            f.write(whole[:len(whole) // 2])
        expect_error(["--data-dir", d, "load_fashion_test.lua"], [bad], cwd=HERE)


def test_small_idx_loads():
    # The converse of the two above: the same files, whole, load.
    with temp_dir("lua") as d:
        with gzip.open(os.path.join(d, "t10k-images-idx3-ubyte.gz"), "wb") as f:
            f.write(small_idx_images())
        with gzip.open(os.path.join(d, "t10k-labels-idx1-ubyte.gz"), "wb") as f:
            f.write(small_idx_labels())
        out, _ = expect_success(["--data-dir", d, "load_fashion_test.lua"], cwd=HERE)
        assert "examples 300 shape 28x28x1" in out, out


def test_idx_pair_reader():
    # Files written here with Python's struct and gzip: 5 images of 3x4
    # pixels, image i's pixels i*10 + (0..11), labels 7, 0, 7, 0, 7.
    def idx(dims, data, type_code=0x08):
        return struct.pack(">BBBB", 0, 0, type_code, len(dims)) + \
            b"".join(struct.pack(">I", d) for d in dims) + bytes(data)
    with temp_dir("lua") as d:
        images, labels, short = (os.path.join(d, n) for n in ("x.idx.gz", "y.idx", "y4.idx"))
        with gzip.open(images, "wb") as f:
            f.write(idx([5, 3, 4], [i * 10 + p for i in range(5) for p in range(12)]))
        with open(labels, "wb") as f:
            f.write(idx([5], [7, 0, 7, 0, 7]))
        with open(short, "wb") as f:
            f.write(idx([4], [1, 2, 3, 4]))
        out, _ = expect_success(["idx_reader.lua", "--images", images, "--labels", labels], cwd=HERE)
        assert "examples 5 shape 3x4x1" in out, out
        for i in range(3):  # sum over p of i*10 + p = 120 i + 66
            assert "sum %d %d\n" % (i + 1, 120 * i + 66) in out, out
        expect_error(["idx_reader.lua", "--images", images, "--labels", short],
                     ["data.idx: " + images + " holds 5 images but " + short + " holds 4 labels"],
                     cwd=HERE)
        expect_error(["idx_reader.lua", "--images", os.path.join(d, "none"), "--labels", labels],
                     [os.path.join(d, "none")], cwd=HERE)
    # Zalando's own files (Debian's dataset-fashion-mnist) read as a plain pair.
    fm = "/usr/share/datasets/fashion-mnist"
    out, _ = expect_success(["idx_reader.lua", "--images", fm + "/t10k-images-idx3-ubyte.gz",
                             "--labels", fm + "/t10k-labels-idx1-ubyte.gz"], cwd=HERE)
    assert "examples 10000 shape 28x28x1" in out, out


def test_script_help():
    out, _ = expect_success(["scripts/fashion_mnist.lua", "--help"])
    for opt in ("--epochs", "--batch-size", "--lr", "--model-dir", "--train-limit"):
        assert opt in out, "--help does not list %s\n%s" % (opt, out)
    # drun's own help still works before the script.
    out, _ = expect_success(["--help"])
    assert "--data-dir" in out, out


def test_version_names_lua():
    # Lua suites pass on LuaJIT and PUC Lua 5.1 builds alike; the version says which ran.
    out, _ = expect_success(["--version"])
    assert re.search(r"^lua: (LuaJIT 2\.|PUC Lua 5\.1\.)", out, re.M), out


def test_version_says_who_chose_the_blas_core():
    # OpenBLAS picks its kernels from the CPU model, drun may ask for better
    # ones, and an OPENBLAS_CORETYPE set before drun starts (this project's
    # development machines set one) is kept: the version says which it was.
    def blas_line(env):
        out, _ = expect_success(["--version"], env=env)
        m = re.search(r"^blas: .*, core (\S+) \(chosen by (\S+)\)$", out, re.M)
        assert m, "drun --version names no BLAS core and who chose it\n" + out
        return m.group(1), m.group(2)

    clean = {k: v for k, v in os.environ.items()
             if k not in ("OPENBLAS_CORETYPE", "DRUN_BLAS_CORE_CHOSEN")}
    core, chooser = blas_line(clean)
    assert chooser in ("OpenBLAS", "drun"), (core, chooser)
    assert blas_line(dict(clean, OPENBLAS_CORETYPE=core)) == (core, "OPENBLAS_CORETYPE")
    # drun's marker without the variable (a parent drun's, passed on alone)
    # claims nothing: the library chose.
    assert blas_line(dict(clean, DRUN_BLAS_CORE_CHOSEN="1"))[1] == "OpenBLAS"


def summary_of(model_dir):
    path = os.path.join(model_dir, "summary.json")
    assert os.path.isfile(path), "no summary.json in " + model_dir
    with open(path) as f:
        s = json.load(f)
    for k in ("global_step", "epochs", "workers", "train", "eval", "wall_seconds"):
        assert k in s, "summary.json lacks %r: %s" % (k, s)
    for k in ("loss", "accuracy", "images_per_sec"):
        assert k in s["train"], "summary.json train lacks %r: %s" % (k, s)
    for k in ("loss", "accuracy"):
        assert k in s["eval"], "summary.json eval lacks %r: %s" % (k, s)
    return s


def test_train_arrays_end_to_end():
    with temp_dir("lua") as d:
        model_dir = os.path.join(d, "run")
        out, _ = expect_success(["-q", "train_arrays.lua", "--model-dir", model_dir], cwd=HERE)
        s = summary_of(model_dir)
        assert s["epochs"] == 20, s
        assert s["global_step"] == 20 * 4, s  # 64 examples, batch 16
        assert s["workers"] == 1, s
        assert s["wall_seconds"] > 0 and s["train"]["images_per_sec"] > 0, s
        # The run's own peak memory (VmHWM): a live process holds MiBs, not KiBs or GiBs.
        assert 5 < s["peak_rss_mib"] < 4096, s
        assert s["eval"]["accuracy"] >= 0.9, s
        assert s["train"]["accuracy"] >= 0.9, s
        assert "eval accuracy" in out, out
        # What the numbers were measured on (docs/formats.md).
        p = s["platform"]
        assert p["cpu_kernels"] in p["cpu_kernels_supported"], p
        assert p["blas_core"] and p["blas_core_chosen_by"] in (
            "OpenBLAS", "drun", "OPENBLAS_CORETYPE"), p



def test_recurrent_layers_train():
    # LSTM, GRU (going backwards) and SimpleRNN from Lua tables of sequences:
    # the sign of a sum over 8 steps, learnt (0.99 measured); Keras' parameter
    # count (720 + 720 + 152 + 18).
    with temp_dir("lua") as d:
        model_dir = os.path.join(d, "run")
        out, _ = expect_success(["-q", "train_sequences.lua", "--model-dir", model_dir], cwd=HERE)
        assert "params 1610" in out, out
        s = summary_of(model_dir)
        assert s["eval"]["accuracy"] >= 0.9, s

def test_bidirectional_layers_train():
    # Bidirectional LSTM (concatenated) and GRU (summed) from Lua, positional
    # and table forms, learn the task of train_sequences.lua; Keras' parameter
    # count (2 x 352 + 2 x 432 + 14); a wrapped Dense is refused by name.
    with temp_dir("lua") as d:
        model_dir = os.path.join(d, "run")
        out, _ = expect_success(["-q", "train_bidirectional.lua", "--model-dir", model_dir],
                                cwd=HERE)
        assert "params 1582" in out, out
        assert "Bidirectional 'bidirectional'" in out and "wraps a recurrent layer" in out, out
        s = summary_of(model_dir)
        assert s["eval"]["accuracy"] >= 0.9, s

def test_loss_scale_optimizer():
    # Loss scaling changes no bit without an overflow (the scale is a power of
    # two): the same run with and without it ends with the same losses; the
    # scale doubled after every 30 finite steps (80 steps) and is in summary.json.
    with temp_dir("lua") as d:
        runs = {}
        for name, extra in (("plain", []), ("scaled", ["--loss-scale", "1024"])):
            model_dir = os.path.join(d, name)
            expect_success(["-q", "train_arrays.lua", "--model-dir", model_dir] + extra, cwd=HERE)
            runs[name] = summary_of(model_dir)
        plain, scaled = runs["plain"], runs["scaled"]
        assert scaled["eval"]["loss"] == plain["eval"]["loss"], (scaled, plain)
        assert scaled["train"]["loss"] == plain["train"]["loss"], (scaled, plain)
        assert scaled["loss_scale"] == {"scale": 4096.0, "skipped_steps": 0}, scaled
        assert "loss_scale" not in plain, plain
        expect_error(["-q", "train_arrays.lua", "--model-dir", os.path.join(d, "bad"),
                      "--loss-scale", "1000"], ["initial_scale", "power of two", "1000"], cwd=HERE)


def test_mixed_precision_policy():
    # On a GPU (the emulated one of drun_emulated_gpu) both mixed policies
    # train to the float32 run's accuracy, mixed_float16 with a loss scale;
    # on the CPU they are refused with the reason. An unknown policy names
    # the script's line.
    with temp_dir("lua") as d:
        expect_success(["-q", "train_arrays.lua", "--model-dir", os.path.join(d, "f32")], cwd=HERE)
        f32 = summary_of(os.path.join(d, "f32"))
        device = f32["device"]
        # On a GPU the steps run as CUDA graphs (AllReduce with one worker
        # leaves the step alone), under either mixed policy too (the loss
        # scale of mixed_float16 lives on the device).
        assert ("cuda_graphs" in f32) == (device == "cuda"), f32
        if device == "cuda":
            assert f32["cuda_graphs"]["captures"] >= 1 and "off" not in f32["cuda_graphs"], f32
            assert f32["cuda_graphs"]["graph_steps"] > 0, f32
        for policy in ("mixed_float16", "mixed_bfloat16"):
            args = ["-q", "train_arrays.lua", "--model-dir", os.path.join(d, policy),
                    "--precision", policy]
            if device == "cpu":
                expect_error(args, [policy, "needs a GPU", "float32"], cwd=HERE)
                continue
            expect_success(args, cwd=HERE)
            s = summary_of(os.path.join(d, policy))
            assert s["eval"]["accuracy"] >= 0.9, s
            assert ("loss_scale" in s) == (policy == "mixed_float16"), s
            assert "off" not in s["cuda_graphs"], s
            assert s["cuda_graphs"]["graph_steps"] > 0, s
        expect_error(["-q", "train_arrays.lua", "--model-dir", os.path.join(d, "bad"),
                      "--precision", "float16"],
                     ["set_global_policy", "float16", "mixed_float16"], cwd=HERE)


def test_activations():
    # Every activation by name on Dense, Activation('gelu') and LeakyReLU train.
    out, _ = expect_success(["activations.lua"], cwd=HERE)
    assert "activations trained:" in out and "finite true" in out, out
    for layer in ("leaky_re_lu (LeakyReLU)", "activation (Activation)", "dense_15 (Dense)"):
        assert layer in out, out
    # An unknown activation names every valid one.
    expect_error(["activations.lua", "--case", "unknown"],
                 ["unknown activation 'mish'", "elu, selu, softplus, softsign, silu, gelu",
                  "hard_sigmoid, exponential, leaky_relu, swish"],
                 [r"activations\.lua:\d+:"], cwd=HERE)


def test_functional_residual_summary():
    out, _ = expect_success(["functional_residual.lua"], cwd=HERE)
    assert "Connected to" in out, out
    assert re.search(r"add \(Add\).*conv2d_1, input", out), out
    assert "params 184" in out, out


def test_functional_attention_takes_nodes_as_arguments():
    out, _ = expect_success(["functional_attention.lua"], cwd=HERE)
    assert re.search(r"multi_head_attention \(MultiHeadAttention\).*input, input", out), out
    assert re.search(r"multi_head_attention_1 \(MultiHeadAttention\).*multi_head_attention, input",
                     out), out
    assert "params 530" in out, out
    assert ("MultiHeadAttention 'multi_head_attention': query (None, 6, 8), value (None, 48): "
            "expects inputs" in out), out


def test_functional_states_encoder_decoder():
    # return_state's nodes and initial_state in a model that trains: the
    # loss after 10 epochs is below the first evaluation's zero-state guess.
    with temp_dir("lua") as d:
        out, _ = expect_success(["-q", "functional_states.lua", "--model-dir", d], cwd=HERE)
    assert re.search(r"lstm_1 \(LSTM\).*input, lstm\[1\], lstm\[2\]", out), out
    assert re.search(r"simple_rnn \(SimpleRNN\).*lstm_1, bidirectional\[1\]", out), out
    loss = float(re.search(r"eval loss ([0-9.]+)", out).group(1))
    assert loss < 0.5, out
    assert "nn.Model: outputs is output 1 of its layer" in out, out
    assert "LSTM 'lstm': takes the sequence and 2 initial state(s), got 1" in out, out


def test_fashion_mnist_small_run():
    if not os.path.isfile(os.path.join(FASHION_DIR, "train-images-idx3-ubyte.gz")):
        raise Skip(FASHION_DIR + " not installed (apt install dataset-fashion-mnist)")
    # Under an emulator (the ppc64le step) evaluation takes the first 2,000
    # test images: all 10,000 were a third of this case's 5.6 minutes there.
    examples = 2000 if os.environ.get("DRUN_EXE_WRAPPER") else 10000
    with temp_dir("lua") as d:
        # 2,000 examples in batches of 32 (63 steps): test accuracy ~0.71. With
        # the script's default batch of 64 (32 steps) it is ~0.60, too close
        # to the 0.6 bar to survive changes in summation order.
        expect_success(["-q", "scripts/fashion_mnist.lua", "--epochs", "1", "--train-limit",
                        "2000", "--batch-size", "32", "--eval-limit", str(examples),
                        "--model-dir", d])
        s = summary_of(d)
        assert s["epochs"] == 1 and s["global_step"] == 63, s
        assert s["eval"]["examples"] == examples, s
        assert s["eval"]["accuracy"] > 0.6, s


def read_summary(model_dir):
    path = os.path.join(model_dir, "summary.json")
    assert os.path.isfile(path), "no summary.json in " + model_dir
    with open(path) as f:
        return json.load(f)


def test_iris_dnn_regressor():
    # petal_width from the other three measurements, 30 rows held out. With
    # seed 1: held-out MSE 0.350 after 300 steps (0.125 after the script's
    # 1000); predicting the training mean gives 0.584.
    with temp_dir("lua") as d:
        out, _ = expect_success(["-q", "scripts/iris_dnn_regressor.lua", "--steps", "300",
                                 "--model-dir", d])
        s = read_summary(d)
        assert s["global_step"] == 300 and s["workers"] == 1, s
        assert s["eval"]["examples"] == 30, s
        assert abs(s["eval"]["mse"] - s["eval"]["loss"]) < 1e-6, s
        assert s["eval"]["loss"] < 0.45, s
        assert "held-out mean squared error" in out, out


def test_iris_canned_classifiers():
    # All 150 rows through data.csv, 40 epochs of batch 16, accuracy on the
    # same rows: measured 0.960 (DNNClassifier {10, 10}) and 0.933 (LinearClassifier).
    for canned, bar in (("DNNClassifier", 0.9), ("LinearClassifier", 0.85)):
        with temp_dir("lua") as d:
            out, _ = expect_success(["-q", "iris_classifier.lua", "--canned", canned, "--data",
                                     os.path.join(ROOT, "data", "iris.csv"), "--model-dir", d],
                                    cwd=HERE)
            s = summary_of(d)
            assert s["epochs"] == 40 and s["global_step"] == 40 * 10, s
            assert s["eval"]["examples"] == 150, s
            assert s["eval"]["accuracy"] >= bar, (canned, s)
            assert canned + " eval accuracy" in out, out


def test_iris_canned_unknown_option():
    err = expect_error(["canned_bad_option.lua"], ["DNNRegressor", "'hiden_units'"],
                       [r"canned_bad_option\.lua:4:"], cwd=HERE)
    assert "traceback" not in err, err
    assert re.search(r"hiden_units.*valid options:.*\bhidden_units\b", err), err


def test_dataset_skip_take_split():
    # dataset_split.lua asserts each part's examples itself and prints "ok" per check.
    out, _ = expect_success(["dataset_split.lua"], cwd=HERE)
    for check in ("skip(3):take(2)", "split 0.8 rest", "seeded split covers the data once",
                  "seeded split is deterministic", "shuffle keeps the part", "sizes", "errors"):
        assert "ok " + check + "\n" in out, "missing check %r\n%s" % (check, out)


def test_token_layers():
    out, _ = expect_success(["-q", "tokens.lua"], cwd=HERE)
    assert "embedding (Embedding)" in out and "layer_normalization (LayerNormalization)" in out, out
    # The first id's parity is learnt from 128 sequences.
    accuracy = float(re.search(r"token accuracy ([0-9.]+)", out).group(1))
    assert accuracy >= 0.9, out
    assert ("bad id: tokens.lua:45: Embedding 'embedding': token id 20 (example 2 of the batch, "
            "position 1) is outside [0, 20)") in out, out


def test_text_reader():
    # text_reader.lua checks each window's ids against the file itself and
    # prints "ok" per check; 65 bytes make 16 windows of 4 (a window needs 5).
    text = "the cat sat on the mat.\n%\nA dog, a log; ZZ top!\n%\nthe end, x. Bye"
    assert len(text) == 65
    with temp_dir("lua") as d:
        path, model_dir = os.path.join(d, "t.txt"), os.path.join(d, "run")
        with open(path, "w") as f:
            f.write(text)
        out, _ = expect_success(["text_reader.lua", "--path", path, "--model-dir", model_dir],
                                cwd=HERE)
        assert "examples 16 shape 4 vocabulary %d\n" % len(set(text)) in out, out
        for check in ("window ids", "shuffled batches", "two shards", "training bytes",
                      "validation windows", "shared vocabulary", "errors"):
            assert "ok " + check + "\n" in out, "missing check %r\n%s" % (check, out)
        # A bigram model: its evaluation also in bits per character (loss / ln 2).
        e = summary_of(model_dir)["eval"]
        assert abs(e["bits_per_char"] - e["loss"] / math.log(2)) < 1e-9, e
        assert "bits_per_char %.6f" % e["bits_per_char"] in out, out


def test_text_fortunes():
    fortunes = "/usr/share/games/fortunes"
    if not os.path.isdir(fortunes):
        raise Skip(fortunes + " not installed (apt install fortunes)")
    out, _ = expect_success(["text_fortunes.lua"], cwd=HERE)
    m = re.search(r"files (\d+) bytes (\d+) vocabulary (\d+) train (\d+) validation (\d+)", out)
    assert m, out
    files, size, vocabulary, train, val = map(int, m.groups())
    # About 2.5 MB of English in some 40 files (not their .dat indexes or .u8 links).
    assert files >= 20 and size > 1000000, out
    assert 64 <= vocabulary < 128, out
    assert train == (size - round(0.1 * size) - 101) // 100 + 1, out
    assert abs(val / (train + val) - 0.1) < 0.01, out


def test_layer_positional_shorthands():
    out, _ = expect_success(["layer_shorthands.lua"], cwd=HERE)
    assert "same model: 978 params" in out, out
    for case in ("twice", "too many", "none taken", "wrong type", "nil hole", "both places"):
        assert "ok " + case + ":" in out, "missing case %r\n%s" % (case, out)
    # Outside a pcall the error is located at the script's line.
    with temp_dir("lua") as d:
        path = os.path.join(d, "bad_dense.lua")
        with open(path, "w") as f:
            f.write("local nn = require('drun').nn\n\nlocal d = nn.Dense(32, 'relu', 'x')\n")
        expect_error([path], ["nn.Dense takes at most 2 positional arguments"],
                     [r"bad_dense\.lua:3:"])


def test_iris_mlp_script():
    # scripts/iris_mlp.lua: 120 rows to train, 30 held out (seeded split).
    # Measured held-out accuracy 0.933-0.967 for seeds 1-5 after 30 epochs.
    with temp_dir("lua") as d:
        h5 = os.path.join(d, "iris_mlp.h5")
        out, _ = expect_success(["-q", "scripts/iris_mlp.lua", "--epochs", "30", "--save", h5])
        m = re.search(r"test accuracy ([0-9.]+), loss ([0-9.]+) on (\d+) flowers", out)
        assert m, out
        assert int(m.group(3)) == 30, out
        assert "120 flowers to train on, 30 to test" in out, out
        assert float(m.group(1)) >= 0.85, out
        with open(h5, "rb") as f:
            assert f.read(8) == b"\x89HDF\r\n\x1a\n", "not an HDF5 file: " + h5
        # The saved model loads back with its 4*16+16 + 16*3+3 weights.
        check = os.path.join(d, "load.lua")
        with open(check, "w") as f:
            f.write("local m = require('drun').load_model(%r)\n"
                    "print('params ' .. m:count_params())\n" % h5)
        out, _ = expect_success([check])
        assert "params 131" in out, out


def test_every_script_dry_runs():
    # --dry-run gives a script stand-ins for its data, fit and evaluate; a
    # script that goes on to print their results (iris_mlp's test accuracy)
    # must still plan and exit 0.
    scripts = sorted(n for n in os.listdir(os.path.join(ROOT, "scripts")) if n.endswith(".lua"))
    assert "iris_mlp.lua" in scripts, scripts
    for name in scripts:
        out, _ = expect_success(["--dry-run", os.path.join("scripts", name)])
        if name == "iris_mlp.lua":
            assert "test accuracy 0.000" in out, out


def main():
    cases = [(name, fn) for name, fn in globals().items()
             if name.startswith("test_") and callable(fn)]
    if RANKS:
        wanted = RANKS[-1] == "--multi-rank"
        cases = [(n, f) for n, f in cases if getattr(f, "multi_rank", False) == wanted]
    if ONLY:
        cases = [(n, f) for n, f in cases if any(o in n for o in ONLY)]
    return run_cases(cases)


if __name__ == "__main__":
    sys.exit(main())
