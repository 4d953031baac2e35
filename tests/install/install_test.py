#!/usr/bin/python3
"""drun installed to a prefix, used from there. Each case runs
`meson install` of this build into a temporary folder, MOVES the installed
tree to another path (as Spack, EasyBuild or a copied folder would) and uses
it from a directory outside the source tree with no DRUN_* variable set:

  relocated  PREFIX/bin/drun trains the seed CNN from the installed script,
             with the installed Lua modules, alone and as 2 ranks (mpirun);
             `module use; module load drun`
             (environment-modules) puts it on PATH
  embed      examples/embed, built from the prefix with `pkg-config --cflags
             --libs drun` alone, trains and writes m.h5; Keras (build/venv)
             loads it and predicts what drun evaluated
  lua_module a stock luajit `require 'drun'`s drun/core.so and trains
  headers    each public header compiles alone and pulls in no header of
             MPI, OpenBLAS, HDF5, CUDA or nlohmann_json (g++ -M)

Usage: install_test.py CASE BUILD_DIR SOURCE_ROOT"""
import glob
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import Stop, require, summary, temp_dir  # noqa: E402
from testlib import run as run_command  # noqa: E402

CASE, BUILD, ROOT = sys.argv[1:4]
BUILD, ROOT = os.path.realpath(BUILD), os.path.realpath(ROOT)
FASHION = "/usr/share/datasets/fashion-mnist"
# What the installed tree must never point back to.
FORBIDDEN = (ROOT + "/", BUILD + "/")


def clean_env(**extra):
    """The environment without drun's variables, Lua's paths, a venv's, or the
    LD_LIBRARY_PATH into the build tree that meson test sets for built libraries."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DRUN_", "LUA_", "PKG_CONFIG"))
           and k not in ("VIRTUAL_ENV", "LD_LIBRARY_PATH")}
    env.update(extra)
    return env


def run(cmd, cwd, env, timeout=300, shell=False):
    """The command's stdout and stderr; a failure stops the case (what follows
    needs what it makes)."""
    print("$", cmd if shell else " ".join(cmd), flush=True)
    p = run_command(cmd, timeout, cwd=cwd, env=env, shell=shell,
                    executable="/bin/bash" if shell else None)
    if p.returncode != 0:
        print(p.stdout[-4000:], p.stderr[-4000:], sep="\n")
        require(False, f"exit {p.returncode}")
    return p.stdout + p.stderr


def install_and_move(tmp):
    """meson install into tmp/stage, then the prefix moved to tmp/moved/drun."""
    stage = os.path.join(tmp, "stage")
    run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", stage], tmp,
        dict(os.environ))
    prefix_line = [l for l in open(os.path.join(BUILD, "meson-info/intro-buildoptions.json"))]
    options = {o["name"]: o["value"] for o in json.loads("".join(prefix_line))}
    staged = stage + options["prefix"]
    moved = os.path.join(tmp, "moved", "drun")
    os.makedirs(os.path.dirname(moved))
    shutil.move(staged, moved)
    shutil.rmtree(stage)
    return moved, options["libdir"]


def case_relocated(prefix, libdir, work):
    drun = os.path.join(prefix, "bin/drun")
    # What the installed drun puts on package.path: its own prefix's modules.
    probe = os.path.join(work, "probe.lua")
    with open(probe, "w") as f:
        f.write("print('PATH=' .. package.path)\nlocal drun = require 'drun'\n"
                "print('CHIEF=' .. tostring(drun.is_chief()))\n")
    out = run([drun, probe], work, clean_env())
    path = re.search(r"PATH=(.*)", out).group(1)
    require(path.startswith(os.path.join(prefix, "share/lua/5.1/?.lua")),
            "the installed drun reads the Lua modules of its own (moved) prefix")
    require(not any(p in path for p in FORBIDDEN), "no path into the source or build tree")
    require("CHIEF=true" in out, "require 'drun' works in a script")

    out = run([drun, os.path.join(prefix, "share/drun/scripts/fashion_mnist.lua"), "--epochs", "1",
               "--train-limit", "2000"], work, clean_env(), timeout=600)
    result = json.load(open(os.path.join(work, "runs/fashion_mnist/summary.json")))
    require(result["global_step"] == 32, f"32 steps of 64 on 2000 images ({result['global_step']})")
    require(result["eval"]["accuracy"] > 0.4,
            f"the seed CNN learns (test accuracy {result['eval']['accuracy']:.3f})")

    # Its ranks, started through mpirun, find the same files.
    run([drun, "-np", "2", os.path.join(prefix, "share/drun/scripts/fashion_mnist.lua"), "--epochs",
         "1", "--train-limit", "1000", "--model-dir", "runs/np2"], work, clean_env(), timeout=600)
    result = json.load(open(os.path.join(work, "runs/np2/summary.json")))
    require(result["workers"] == 2 and result["global_step"] == 8,
            f"drun -np 2 from the moved prefix: 2 workers, 8 steps ({result['global_step']})")

    for template in ("slurm/drun.sbatch", "lsf/drun.lsf", "pbs/drun.pbs"):
        require(os.path.isfile(os.path.join(prefix, "share/drun/platforms", template)),
                "job template " + template + " installed")
    require(os.path.isfile(os.path.join(prefix, "share/drun/models/seed_cnn.lua")), "models installed")

    init = "/usr/share/modules/init/bash"
    require(os.path.isfile(init), "environment-modules is installed (tools/bootstrap)")
    out = run(f"source {init} && module use {prefix}/share/modulefiles && module load drun && "
              "command -v drun && drun --version && echo LUA_PATH=$LUA_PATH && "
              "pkg-config --modversion drun && module unload drun && "
              "echo AFTER=$(command -v drun || echo none)", work, clean_env(), shell=True)
    require(f"{prefix}/bin/drun\n" in out, "module load drun puts PREFIX/bin/drun on PATH")
    require(re.search(r"^drun \d", out, re.M) is not None, "drun --version runs from the module")
    require(f"LUA_PATH={prefix}/share/lua/5.1/?.lua" in out, "the module sets LUA_PATH")
    require("AFTER=none" in out, "module unload drun takes it off PATH")


def case_embed(prefix, libdir, work):
    env = clean_env(PKG_CONFIG_PATH=os.path.join(prefix, libdir, "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "drun"], work, env).split()
    require(not any(f.find(p) >= 0 for f in flags for p in FORBIDDEN),
            "pkg-config's flags name no path into the source or build tree: " + " ".join(flags))
    libs = run(["pkg-config", "--variable=libdir", "drun"], work, env).strip()
    source = os.path.join(prefix, "share/drun/examples/embed/main.cpp")
    require(len(open(source).read().splitlines()) < 100, "examples/embed is under 100 lines")
    run(["c++", "-std=c++20", "-O1", "-Wall", "-Wextra", "-Werror", source, "-o", "embed"]
        + flags + ["-Wl,-rpath," + libs], work, env)
    linked = run(["ldd", "./embed"], work, env)
    found = re.search(r"libdrun\.so\S* => (\S+)", linked)
    require(found is not None and os.path.realpath(found.group(1)).startswith(prefix + "/"),
            "embed runs with the moved prefix's libdrun.so: " + (found.group(1) if found else "none"))
    out = run(["./embed", "--train-limit", "2000", "--epochs", "1", "--out", "m.h5"], work,
              clean_env(), timeout=600)
    accuracy = float(re.search(r"test accuracy ([\d.]+)", out).group(1))
    require(accuracy > 0.4, f"the embedded program trains (test accuracy {accuracy:.4f})")

    py = os.path.join(BUILD, "venv/bin/python")
    require(os.access(py, os.X_OK), f"{py} exists (tools/python_env makes it)")
    keras = f"""
import gzip, os, sys
os.environ.setdefault("KERAS_BACKEND", "jax")
import numpy as np, keras
with gzip.open("{FASHION}/t10k-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28, 1) / np.float32(255)
with gzip.open("{FASHION}/t10k-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)
model = keras.models.load_model("m.h5")
print("PARAMS", model.count_params(), "OPTIMIZER", type(model.optimizer).__name__)
p = model.predict(x.astype("float32"), batch_size=1000, verbose=0)
print("ACCURACY", float((p.argmax(1) == y).mean()))
"""
    out = run([py, "-c", keras], work,
              dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3"))
    require("PARAMS 347146" in out, "Keras loads m.h5: the seed CNN's 347,146 parameters")
    require("OPTIMIZER SGD" in out, "with its training configuration (SGD)")
    keras_accuracy = float(re.search(r"ACCURACY ([\d.]+)", out).group(1))
    require(abs(keras_accuracy - accuracy) <= 2e-3,
            f"Keras' test accuracy {keras_accuracy:.4f} is drun's {accuracy:.4f}")


def case_lua_module(prefix, libdir, work):
    luajit = shutil.which("luajit")
    require(luajit is not None, "a stock luajit is installed")
    # The prefix first: drun itself comes from there; the tests' toy data set after it.
    env = clean_env(LUA_PATH=f"{prefix}/share/lua/5.1/?.lua;{prefix}/share/lua/5.1/?/init.lua;"
                             f"{ROOT}/tests/lua/?.lua;;",
                    LUA_CPATH=f"{prefix}/lib/lua/5.1/?.so;;")
    script = os.path.join(ROOT, "tests/install/lua_module.lua")
    out = run([luajit, "-e", "local drun = require 'drun'; assert(drun.core.context().rank == 0)",
               script], work, env)
    require("lua module: ok" in out, "luajit trains through require 'drun'")
    out = run([luajit, "-e", "local drun = require 'drun'; "
               "local ok, e = pcall(drun.data.fashion_mnist, {split = 'validation'}); "
               "print(ok, e)"], work, env)
    require(out.startswith("false") and "validation" in out,
            "a bad argument is a Lua error naming it: " + out.strip())


# Headers of the libraries that the public API must keep out of its users' builds.
PRIVATE_HEADERS = re.compile(r"/(mpi[^/]*\.h|openmpi/|cblas\.h|openblas[^/]*|hdf5[^/]*|H5[^/]*\.h"
                             r"|cuda[^/]*\.h|cublas[^/]*|cudnn[^/]*|nccl[^/]*|nlohmann/)")


def case_headers(prefix, libdir, work):
    headers = sorted(glob.glob(os.path.join(prefix, "include/drun/*.hpp")))
    require(len(headers) >= 6, f"{len(headers)} public headers installed")
    for h in headers:
        name = "drun/" + os.path.basename(h)
        src = os.path.join(work, "one.cpp")
        with open(src, "w") as f:
            f.write(f"#include <{name}>\n")
        run(["c++", "-std=c++20", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only",
             "-I" + os.path.join(prefix, "include"), src], work, clean_env())
        deps = run(["c++", "-std=c++20", "-M", "-I" + os.path.join(prefix, "include"), src], work,
                   clean_env())
        bad = sorted(set(m.group(0) for m in PRIVATE_HEADERS.finditer(deps)))
        require(not bad, f"{name} compiles alone and includes no MPI/BLAS/HDF5/CUDA/JSON header"
                + (f" (includes {bad})" if bad else ""))
    internal = [h for h in headers if "runtime/" in open(h).read()]
    require(not internal, "no public header names the runtime's internals")


def main():
    cases = {"relocated": case_relocated, "embed": case_embed, "lua_module": case_lua_module,
             "headers": case_headers}
    if CASE not in cases:
        raise SystemExit(f"unknown case {CASE}; cases: {', '.join(cases)}")
    with temp_dir("install") as tmp:
        try:
            prefix, libdir = install_and_move(tmp)
            work = os.path.join(tmp, "work")
            os.makedirs(work)
            cases[CASE](prefix, libdir, work)
        except Stop:
            pass  # reported; each step needs the ones before it
    return summary()


if __name__ == "__main__":
    sys.exit(main())
