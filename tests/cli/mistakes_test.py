#!/usr/bin/python3
"""A new user's mistakes, one table: each is a small script (or command line)
with one mistake in it. A usage error (a typo'd or badly typed option of a
layer, optimizer, loss, schedule, strategy, data reader, pipeline op, hook or
fit; a bad value; a wrong shape; a missing file; a bad flag of drun's or of
the script's) is one line on stderr, no traceback, exit 2; that line names the
script and the line where the mistaken table was written (the line marked
`-- HERE`), and the words that say what was wrong, with "did you mean" for a
near miss. An error in the script's own code keeps its traceback and exit 1.

Usage: mistakes_test.py DRUN SOURCE_ROOT [CASE...]"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import testlib  # noqa: E402
from testlib import run_cases, show, temp_dir  # noqa: E402

DRUN = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
ONLY = sys.argv[3:]
ENV = dict(os.environ, DRUN_THREADS="1")

PRELUDE = """local drun = require 'drun'
local nn, data, optim = drun.nn, drun.data, drun.optim
"""
# A model of two inputs and a data set of 4 rows (tiny.csv) that scripts build on.
MODEL = """local model = nn.Sequential{nn.Dense{units = 2, input_shape = {2}}}
"""
COMPILED = MODEL + """model:compile{optimizer = 'sgd', loss = 'sparse_categorical_crossentropy'}
local ds = data.csv{path = 'tiny.csv'}
"""
ARGS = """local opt = drun.args{epochs = 1, strategy = 'all_reduce'}
drun.strategy.from_args(opt.strategy, false)
"""

# (name, script body after PRELUDE, arguments after the script, words the line has)
SCRIPTS = [
    ("layer_option", """local m = nn.Sequential{
  nn.Dense{units = 4, input_shape = {2}},
  nn.Dense{units = 2, activaton = 'relu'},  -- HERE
}""", [], "did you mean 'activation'"),
    ("conv_option", """local m = nn.Sequential{
  nn.Conv2D{filters = 2, kernel_size = 3, input_shape = {8, 8, 1},  -- HERE
            strides = 1, paddin = 'same'},
}""", [], "did you mean 'padding'"),
    ("layer_class", """local m = nn.Sequential{
  nn.Dens{units = 2, input_shape = {2}},  -- HERE
}""", [], "drun.nn has no 'Dens' (did you mean 'Dense'?)"),
    ("optimizer_class", "optim.adam{}  -- HERE", [], "did you mean 'Adam'"),
    ("layer_type", "nn.Dense{units = 'many'}  -- HERE", [], "'units' has the wrong type"),
    ("layer_activation", "nn.Dense{units = 2, activation = 'relux'}  -- HERE", [],
     "did you mean 'relu'"),
    ("layer_value", "nn.Dropout{rate = 1.5}  -- HERE", [], "rate must be in [0, 1)"),
    ("layer_positional", "nn.Dense('relu')  -- HERE", [], "argument 1 is units"),
    ("input_option", "nn.Input{shap = {2}}  -- HERE", [], "did you mean 'shape'"),
    ("shapes", """local m = nn.Sequential{  -- HERE
  nn.Conv2D{filters = 4, kernel_size = 3, input_shape = {8, 8, 1}},
  nn.Flatten{},
  nn.Conv2D{filters = 2, kernel_size = 3},
}""", [], "'conv2d_1'"),
    ("optimizer_option", "optim.Adam{learning_rat = 0.01}  -- HERE", [],
     "did you mean 'learning_rate'"),
    ("optimizer_type", "optim.SGD{momentum = 'high'}  -- HERE", [], "'momentum' has the wrong type"),
    ("optimizer_name", MODEL + "model:compile{optimizer = 'adamm', loss = 'mse'}  -- HERE", [],
     "did you mean 'adam'"),
    ("schedule_option", """optim.schedules.ExponentialDecay{  -- HERE
  initial_learning_rate = 0.1, decay_step = 10, decay_rate = 0.9}""", [],
     "did you mean 'decay_steps'"),
    ("loss_option", "drun.losses.SparseCategoricalCrossentropy{from_logit = true}  -- HERE", [],
     "did you mean 'from_logits'"),
    ("loss_name", MODEL + "model:compile{optimizer = 'sgd', loss = 'msee'}  -- HERE", [],
     "did you mean 'mse'"),
    ("strategy_option", "drun.strategy.AllReduce{scale_lrr = true}  -- HERE", [],
     "did you mean 'scale_lr'"),
    ("strategy_name", "drun.strategy.named('allreduce')  -- HERE", [], "did you mean 'all_reduce'"),
    ("reader_option", "data.csv{pat = 'tiny.csv'}  -- HERE", [], "did you mean 'path'"),
    ("missing_file", "data.csv{path = 'no_such.csv'}  -- HERE", [], "no_such.csv"),
    ("missing_idx", "data.idx{images = 'no_such.gz', labels = 'no_such_labels.gz'}  -- HERE", [],
     "no_such.gz"),
    ("pipeline_option", "data.csv{path = 'tiny.csv'}:shuffle{sede = 1}  -- HERE", [],
     "did you mean 'seed'"),
    ("arrays_rows", "data.arrays{x = {{0, 1}}, y = {1, 0}}  -- HERE", [],
     "x has 1 examples but y has 2"),
    ("hook_option", "drun.hooks.StopAtStepHook{last_stepp = 3}  -- HERE", [],
     "did you mean 'last_step'"),
    ("fit_option", COMPILED + "model:fit{x = ds:batch(2), epoch = 1}  -- HERE", [],
     "did you mean 'epochs'"),
    ("fit_shape", MODEL.replace("{2}", "{3}") +
     "model:compile{optimizer = 'sgd', loss = 'sparse_categorical_crossentropy'}\n"
     "model:fit{x = data.csv{path = 'tiny.csv'}:batch(2), epochs = 1}  -- HERE", [],
     "expects (None, 3)"),
    ("run_config_option", "drun.RunConfig{model_dri = 'runs/x'}  -- HERE", [],
     "did you mean 'model_dir'"),
    ("canned_option", "drun.DNNClassifier{hiden_units = {4}, n_classes = 2}  -- HERE", [],
     "did you mean 'hidden_units'"),
    ("script_flag", ARGS, ["--epoch", "2"], "did you mean '--epochs'"),
    ("strategy_flag", ARGS, ["--strategy", "allreduce"], "did you mean 'all_reduce'"),
]

# (name, drun's arguments before the script, words the line has)
FLAGS = [
    ("drun_flag", ["--thread", "2"], "did you mean --threads"),
    ("drun_flag_value", ["--device", "gpu"], "--device"),
    ("drun_np", ["-np", "0"], "--np"),
]


def run(args, cwd):
    p = testlib.run([DRUN] + args, 60, cwd=cwd, env=ENV)
    return p.returncode, p.stdout, p.stderr


def one_line(rc, out, err):
    """The one line a usage error prints: exit 2, no traceback, no crash."""
    lines = [l for l in err.splitlines() if l.strip()]
    assert rc == 2, "exit %d, expected 2\n%s" % (rc, show(rc, out, err))
    assert len(lines) == 1, "%d lines on stderr, expected 1\n%s" % (len(lines), err)
    assert "traceback" not in err and "what():" not in err, err
    return lines[0]


def script_case(body, args, words, before=()):
    def case(tmp):
        with open(os.path.join(tmp, "tiny.csv"), "w") as f:
            f.write("a,b,label\n0,1,1\n1,0,0\n1,1,1\n0,0,0\n")
        text = PRELUDE + body + "\n"
        with open(os.path.join(tmp, "mistake.lua"), "w") as f:
            f.write(text)
        line = one_line(*run(list(before) + ["mistake.lua"] + args, tmp))
        assert words in line, "no %r in: %s" % (words, line)
        marked = [i + 1 for i, l in enumerate(text.splitlines()) if "-- HERE" in l]
        if marked:  # a script's mistake: at its line; a flag's: at the flag
            assert re.match(r"drun: mistake\.lua:%d: " % marked[0], line), \
                "not at mistake.lua:%d: %s" % (marked[0], line)
        else:
            assert "mistake.lua:" not in line.split(": ", 2)[1], line
        return line[:100]
    return case


def flag_case(flags, words):
    def case(tmp):
        with open(os.path.join(tmp, "empty.lua"), "w") as f:
            f.write("print('ran')\n")
        line = one_line(*run(flags + ["empty.lua"], tmp))
        assert words in line, "no %r in: %s" % (words, line)
        return line[:100]
    return case


RUN = COMPILED.replace("local ds", "local opt = drun.args{batch_size = 2}\nlocal ds") + """model:fit{x = ds:batch(opt.batch_size), epochs = 1, model_dir = 'run',  -- HERE
          save_checkpoints_steps = 1}
"""


def case_run_folder(tmp):
    """A finished run's folder: the same command says it is done (exit 0); a
    run of another batch size, worker count or model, or a trace of the
    finished run, is refused in one line that names what differs and the flag
    to use."""
    with open(os.path.join(tmp, "tiny.csv"), "w") as f:
        f.write("a,b,label\n0,1,1\n1,0,0\n1,1,1\n0,0,0\n")
    text = PRELUDE + RUN
    with open(os.path.join(tmp, "train.lua"), "w") as f:
        f.write(text)
    at = "drun: train.lua:%d: " % ([i + 1 for i, l in enumerate(text.splitlines()) if "-- HERE" in l][0])
    rc, out, err = run(["-q", "train.lua"], tmp)
    assert rc == 0, show(rc, out, err)
    rc, out, err = run(["-q", "train.lua"], tmp)
    assert rc == 0 and "nothing to do (more --epochs continue it, --model-dir DIR" in err, \
        show(rc, out, err)
    line = one_line(*run(["train.lua", "--batch-size", "4"], tmp))
    assert line.startswith(at) and "batch_size 2 there, 4 now (--batch-size)" in line, line
    assert "--model-dir DIR" in line, line
    # More workers: refused by the launcher before any rank starts.
    line = one_line(*run(["-np", "2", "train.lua"], tmp))
    assert "workers 1 there, 2 now (-np)" in line and "--model-dir DIR" in line, line
    # Another model over the folder: its checkpoint does not fit.
    with open(os.path.join(tmp, "other.lua"), "w") as f:
        f.write(text.replace("units = 2", "units = 3"))
    line = one_line(*run(["other.lua"], tmp))
    assert line.startswith(at.replace("train.lua", "other.lua")) and "--model-dir DIR" in line, line
    line = one_line(*run(["--timeline", "t.json", "train.lua"], tmp))
    assert line.startswith(at) and "nothing to trace" in line, line
    assert not os.path.exists(os.path.join(tmp, "t.json")), "a trace of nothing was written"


def case_script_error(tmp):
    """The script's own fault is no usage error: its traceback, exit 1."""
    with open(os.path.join(tmp, "fault.lua"), "w") as f:
        f.write(PRELUDE + "local t = nil\nprint(t.field)\n")
    rc, out, err = run(["fault.lua"], tmp)
    assert rc == 1 and "stack traceback:" in err and "fault.lua:4:" in err, show(rc, out, err)


def main():
    cases = [(n, script_case(b, a, w)) for n, b, a, w in SCRIPTS]
    cases += [(n, flag_case(f, w)) for n, f, w in FLAGS]
    # In a job of two workers: the launcher's planning run finds it, one line.
    name, body, args, words = SCRIPTS[0]
    cases.append((name + "_np2", script_case(body, args, words, before=["-np", "2"])))
    cases += [("run_folder", case_run_folder), ("script_error", case_script_error)]
    if ONLY:
        cases = [(n, f) for n, f in cases if n in ONLY]
    return run_cases(cases, temp="mistakes")


if __name__ == "__main__":
    sys.exit(main())
