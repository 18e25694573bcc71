"""Torch's C++ headers, precompiled once per sandbox environment, for the candidates' own C++ extensions.

Place in the flow: a package whose candidates build a C++ extension with
``torch.utils.cpp_extension`` (``load_inline``) says ``warm =
["torch-headers"]`` in its challenge.toml. When the sandbox environment is
built (``runner/warm.py``, inside the Docker image's build and for bwrap's
host folder), :func:`build` compiles ``ATen/ATen.h`` into a GCC precompiled
header under ``<warm>/pch``, with exactly the flags ``load_inline`` passes
to g++ in that environment. Every torch sandbox then finds it read-only at
:data:`READ_DIR`, which :func:`enable` puts on ``CPATH``.

Why: parsing ATen.h is about two thirds of the g++ time of a small
extension (about 8 s of the 12 s of CPU g++ spends on
cpp-torch-library-op's reference here); with the header precompiled, what is
left is the candidate's own code, compiled for real on every submission.

How GCC uses it: while it looks for ``<ATen/ATen.h>`` it looks first for
``ATen/ATen.h.gch`` in each include folder; ``CPATH`` folders come before
the ``-isystem`` ones where torch's headers are. The precompiled header is
used only when it is the translation unit's first include and the
compilation's flags match the ones it was built with (the same g++, the
same -std, -f and -O options, no macro it depends on defined differently);
otherwise GCC ignores it and reads the real header, which is only slower.
``-DTORCH_EXTENSION_NAME``, which names each extension, is left out: ATen.h
never reads it. Only ATen.h: the starter's first include, and 380 MB
already; ``torch/extension.h`` (what ``load_inline`` puts first without
``no_implicit_headers``) would be 790 MB more.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile

# The folder of the warm caches the headers go into, and where every sandbox
# finds it: under sandbox/warm.py's SANDBOX_WARM_DIR (which the runner cannot import).
FOLDER = "pch"
READ_DIR = f"/opt/warm/{FOLDER}"
# Headers precompiled, as the candidates' sources include them.
HEADERS = ("ATen/ATen.h",)
# The compiler load_inline runs in a sandbox: the starter sets CXX=g++ (c++
# is a link through /etc/alternatives, which the sandbox user cannot read).
COMPILER = "g++"


def load_inline_cflags() -> list[str]:
    """The flags ``load_inline`` gives g++ for a C++ (CPU) source in this environment, without the extension's name.

    Read from the ninja file torch itself writes, so a new torch's flags are
    followed, not copied here.
    """
    from torch.utils import cpp_extension

    with tempfile.TemporaryDirectory(prefix="torch-headers-") as folder:
        ninja = os.path.join(folder, "build.ninja")
        cpp_extension._write_ninja_file_to_build_library(
            path=ninja, name="probe_flags", sources=[os.path.join(folder, "main.cpp")],
            extra_cflags=[], extra_cuda_cflags=[], extra_sycl_cflags=[], extra_ldflags=[], extra_include_paths=[],
            with_cuda=False, with_sycl=False, is_standalone=False,
        )  # fmt: skip
        with open(ninja, encoding="utf-8") as fh:
            line = next(line for line in fh if line.startswith("cflags = "))
    return [flag for flag in shlex.split(line[len("cflags = ") :]) if not flag.startswith("-DTORCH_EXTENSION_NAME=")]


def build(warm_dir: str) -> list[str]:
    """Precompile :data:`HEADERS` into ``<warm_dir>/pch``; returns the paths written.

    Raises CalledProcessError (with g++'s output) if a header does not compile.
    """
    from torch.utils import cpp_extension

    flags = load_inline_cflags()
    include = cpp_extension.include_paths("cpu")[0]  # torch/include, where ATen/ and torch/ are
    written = []
    for header in HEADERS:
        target = os.path.join(warm_dir, FOLDER, header + ".gch")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        partial = target + ".part"
        try:
            subprocess.run(
                [COMPILER, "-x", "c++-header", os.path.join(include, header), "-o", partial, *flags],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
        except BaseException:
            if os.path.exists(partial):  # g++ killed or failing halfway: no half header for a sandbox to trip on
                os.unlink(partial)
            raise
        os.replace(partial, target)
        written.append(target)
    return written


def enable(read_dir: str = READ_DIR) -> bool:
    """Put the precompiled headers on ``CPATH`` for every compile this sandbox runs, if the environment has them."""
    if not os.path.isdir(read_dir):
        return False
    current = os.environ.get("CPATH")
    os.environ["CPATH"] = read_dir if not current else f"{read_dir}:{current}"
    return True
