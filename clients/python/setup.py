"""Builds the package, generating its gRPC stubs from the repository's proto/.

The stubs are never committed: build_py runs protoc (Debian's, with
grpc_python_plugin) on proto/holdshelf/v1 and proto/google/rpc and writes
the output into the build tree under holdshelf/_gen/. google/rpc is
generated because Debian ships no googleapis-common-protos; proto/grpc is
left out, since a generated grpc/ package would shadow grpcio itself.

The generated modules import each other absolutely ("from holdshelf.v1
import message_pb2"), which inside a package named holdshelf would resolve
to holdshelf.v1, a package that does not exist. So every such import is
rewritten to the private copy: "from holdshelf._gen.holdshelf.v1 import".
That keeps the generated code out of the public namespace and leaves any
other google.rpc installation alone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PROTO_SUBDIRS = ("holdshelf/v1", "google/rpc")
# Generated import lines naming a generated package; rewritten under _gen.
GENERATED_IMPORT = re.compile(r"^from (holdshelf\.v1|google\.rpc) import ", re.MULTILINE)


def find_proto_root() -> Path:
    """proto/ of the repository this package sits in, or HOLDSHELF_PROTO_DIR."""
    override = os.environ.get("HOLDSHELF_PROTO_DIR")
    candidates = [Path(override)] if override else [parent / "proto" for parent in HERE.parents]
    for candidate in candidates:
        if (candidate / "holdshelf" / "v1" / "queue_service.proto").is_file():
            return candidate
    raise SystemExit(
        "holdshelf: proto/holdshelf/v1/queue_service.proto not found above "
        f"{HERE}; install from a checkout of the repository or set HOLDSHELF_PROTO_DIR"
    )


def tool(name: str) -> str:
    """A generator's path: PATH first, then Debian's /usr/bin."""
    found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    if found is None:
        raise SystemExit(f"holdshelf: {name} not found (Debian: protobuf-compiler, protobuf-compiler-grpc)")
    return found


def generate(destination: Path) -> None:
    """Writes the stubs of PROTO_SUBDIRS into destination, imports rewritten."""
    proto_root = find_proto_root()
    files = sorted(str(p.relative_to(proto_root)) for sub in PROTO_SUBDIRS for p in (proto_root / sub).glob("*.proto"))
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [
                tool("protoc"),
                f"--proto_path={proto_root}",
                f"--python_out={out}",
                f"--grpc_python_out={out}",
                f"--plugin=protoc-gen-grpc_python={tool('grpc_python_plugin')}",
                *files,
            ],
            check=True,
        )
        if destination.exists():
            shutil.rmtree(destination)  # like buf's clean: no stale stubs
        for source in Path(out).rglob("*.py"):
            target = destination / source.relative_to(out)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = GENERATED_IMPORT.sub(lambda m: f"from holdshelf._gen.{m.group(1)} import ", source.read_text())
            target.write_text(text)
    for directory in [destination, *(d for d in destination.rglob("*") if d.is_dir())]:
        (directory / "__init__.py").touch()


class BuildWithStubs(build_py):
    """build_py, then the generated stubs into the build tree's holdshelf/_gen.

    An editable install (pip install -e) imports the package from src/, so
    there the stubs go to src/holdshelf/_gen (git-ignored); rerun the
    install after proto/ changes.
    """

    def run(self) -> None:
        editable = getattr(self, "editable_mode", False)  # set by setuptools >= 64 for pip install -e
        package = HERE / "src" / "holdshelf" if editable else Path(self.build_lib) / "holdshelf"
        if not editable and package.exists():
            # pip builds in the source tree, and build_py only adds files:
            # a module renamed since the last build would ship twice.
            shutil.rmtree(package)
        super().run()
        generate(package / "_gen")


setup(cmdclass={"build_py": BuildWithStubs})
