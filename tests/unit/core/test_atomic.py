"""Atomic writes (cocoviz.core.atomic) and the sweep journal: a write that fails or is killed midway never
leaves a cut file or a mixed folder, and never loses what was there before."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from cocoviz import estimate, load_release
from cocoviz.core import atomic
from cocoviz.core.atomic import atomic_folder, atomic_path, check_writable_folder, write_bytes, write_text
from cocoviz.errors import ParameterError
from cocoviz.hierarchy import Hierarchy

ROOT = Path(__file__).resolve().parents[3]


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _fail_midway(tmp: Path, data: bytes, code: int = errno.ENOSPC) -> None:
    with open(tmp, "wb") as f:
        f.write(data[: len(data) // 2])
    raise OSError(code, os.strerror(code))


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_write_that_fails_midway_keeps_the_previous_file(tmp_path, code):
    path = tmp_path / "out.bin"
    write_bytes(path, b"old and complete")
    with pytest.raises(OSError) as caught:
        with atomic_path(path) as tmp:
            _fail_midway(tmp, b"new " * 1000, code)
    assert caught.value.errno == code
    assert path.read_bytes() == b"old and complete"
    assert _files(tmp_path) == ["out.bin"]


def test_a_write_that_fails_midway_leaves_no_file_where_there_was_none(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(tmp_path / "new.txt") as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt
    assert _files(tmp_path) == []


def test_write_text_replaces_whole_and_refuses_what_is_not_a_path(tmp_path):
    write_text(tmp_path / "a.txt", "one")
    write_text(tmp_path / "a.txt", "two ✓")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "two ✓"
    assert _files(tmp_path) == ["a.txt"]
    with pytest.raises(ParameterError, match="str or os.PathLike"):
        write_text(3, "x")
    with pytest.raises(FileNotFoundError, match="the folder does not exist") as caught:
        write_text(tmp_path / "no" / "a.txt", "x")
    assert caught.value.filename == str(tmp_path / "no")


def test_temporaries_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    (tmp_path / f".out.txt.{pid}.abcd1234.tmp").write_text("cut")
    (tmp_path / f".results.{pid}.abcd1234.tmp").mkdir()
    (tmp_path / f".other.{pid}.abcd1234.tmp").write_text("not ours")  # another target's: left alone
    write_text(tmp_path / "out.txt", "whole")
    with atomic_folder(tmp_path / "results") as folder:
        (folder / "a").write_text("1")
    assert _files(tmp_path) == [f".other.{pid}.abcd1234.tmp", "out.txt", "results"]


def test_a_previous_folder_left_aside_by_a_killed_swap_is_put_back(tmp_path):
    """Without an atomic exchange, a kill between the two renames leaves the old folder beside the target."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    aside = tmp_path / f".table3.{int(dead.stdout)}.abcd1234.old"
    aside.mkdir()
    (aside / "trials.csv").write_text("old")
    with pytest.raises(OSError):
        with atomic_folder(tmp_path / "table3"):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert _files(tmp_path) == ["table3"] and (tmp_path / "table3" / "trials.csv").read_text() == "old"


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_folder_is_swapped_in_whole_or_not_at_all(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    target = tmp_path / "table3"
    with atomic_folder(target) as folder:
        for name in ("trials.csv", "summary.csv", "config.json"):
            (folder / name).write_text("old")
    with pytest.raises(OSError):
        with atomic_folder(target) as folder:
            (folder / "trials.csv").write_text("new, cut")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert {p.name: p.read_text() for p in target.iterdir()} == dict.fromkeys(
        ["trials.csv", "summary.csv", "config.json"], "old"
    )
    with atomic_folder(target) as folder:
        (folder / "trials.csv").write_text("new")
    assert {p.name: p.read_text() for p in target.iterdir()} == {"trials.csv": "new"}
    assert _files(tmp_path) == ["table3"]


_FOLDER_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from cocoviz.core.atomic import atomic_folder
    target = Path(sys.argv[1])
    print("ready", flush=True)
    for version in range(1, 10**6):
        with atomic_folder(target) as folder:
            for name in ("trials.csv", "summary.csv", "table.md", "config.json"):
                (folder / name).write_text(str(version) * 20000)
    """
)


@pytest.mark.slow
def test_kill_9_while_writing_folders_leaves_one_complete_folder(tmp_path):
    target = tmp_path / "table3"
    for delay in (0.05, 0.15, 0.3, 0.5):
        child = subprocess.Popen(
            [sys.executable, "-c", _FOLDER_WRITER, str(target)], stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        child.stdout.readline()
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        if target.exists():
            contents = {p.read_text() for p in target.iterdir()}
            assert _files(target) == ["config.json", "summary.csv", "table.md", "trials.csv"]
            assert len(contents) == 1 and len(next(iter(contents))) >= 20000, "a mixed or cut folder"
    with atomic_folder(target) as folder:  # the next write clears the killed writers' temporaries
        (folder / "x").write_text("1")
    assert _files(tmp_path) == ["table3"]


def _run_without_root_override(code: str, *args: str) -> subprocess.CompletedProcess:
    """Run python ``code`` so that file permissions bind it even when the tests run as root."""
    prefix = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: permissions cannot be enforced")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]
    return subprocess.run(
        [*prefix, sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


def test_a_read_only_folder_is_refused_with_its_reason(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        done = _run_without_root_override(
            "import sys\n"
            "from cocoviz.core.atomic import check_writable_folder\n"
            "try:\n    check_writable_folder(sys.argv[1], '--out')\n"
            "except ValueError as exc:\n    print(exc)\n",
            str(folder),
        )
    finally:
        folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert f"--out {folder} is not writable: Permission denied" in done.stdout
    assert _files(folder) == []


def test_a_writable_folder_is_created_and_left_clean(tmp_path):
    assert check_writable_folder(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert _files(tmp_path / "a" / "b") == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(ParameterError, match="not writable"):
        check_writable_folder(tmp_path / "file")


# ------------------------------------------------------------------------------------------ Release.save
def _release(seed: int, leaves: int = 3):
    counts = pd.DataFrame(
        {"s": [f"r{k}" for k in range(leaves) for _ in range(2)], "size": [1, 3] * leaves, "count": [5, 2] * leaves}
    )
    tree = Hierarchy.from_counts(counts, size="size", count="count", levels=["s"])
    return estimate(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=seed)


def _loads(path: Path) -> pd.DataFrame | None:
    try:
        return load_release(path).to_frame()
    except ValueError:
        return None


@pytest.mark.parametrize("cut", [0.0, 0.3, 0.5, 0.9, 0.99])
def test_a_release_save_that_fails_midway_keeps_the_good_release(tmp_path, monkeypatch, cut):
    """Issue 27 item 5: a save that fails on a full disk deleted the good release at that path."""
    good, other = _release(0), _release(1, leaves=40)
    path = tmp_path / "release.parquet"
    good.save(path)
    real_close = pq.ParquetWriter.close

    def full_disk(writer):  # the file written whole, then cut, as a disk that fills up at its end would
        real_close(writer)
        data = Path(writer.where).read_bytes()
        Path(writer.where).write_bytes(data[: int(len(data) * cut)])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "close", full_disk)
    with pytest.raises(OSError, match="No space left"):
        other.save(path)
    with pytest.raises(OSError, match="No space left"):
        other.save(tmp_path / "new.parquet")
    pd.testing.assert_frame_equal(_loads(path), good.to_frame())
    assert _files(tmp_path) == ["release.parquet"]  # no cut file, at the path or beside it


_FSIZE_SAVER = textwrap.dedent(
    """
    import resource, signal, sys
    sys.path.insert(0, ".")
    from tests.unit.core.test_atomic import _release
    release = _release(1, leaves=400)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    try:
        release.save(sys.argv[1])
    except OSError as exc:
        print(type(exc).__name__, exc)
    """
)


@pytest.mark.slow
def test_a_release_save_cut_by_the_operating_system_keeps_the_good_release(tmp_path):
    """A real failure midway: the kernel refuses writes past 4 KiB (RLIMIT_FSIZE), as a full disk would."""
    good = _release(0)
    path = tmp_path / "release.parquet"
    good.save(path)
    done = subprocess.run(
        [sys.executable, "-c", _FSIZE_SAVER, str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "File too large" in done.stdout or "EFBIG" in done.stdout, done.stdout
    pd.testing.assert_frame_equal(_loads(path), good.to_frame())
    assert _files(tmp_path) == ["release.parquet"]


def test_a_release_saves_into_a_buffer_as_the_download_button_does():
    import io

    release = _release(0)
    buffer = io.BytesIO()
    release.save(buffer)  # pages/explore.py offers the release file for download this way
    pd.testing.assert_frame_equal(load_release(io.BytesIO(buffer.getvalue())).to_frame(), release.to_frame())
    with pytest.raises(ParameterError, match="a file path or a binary file object"):
        release.save(3)
