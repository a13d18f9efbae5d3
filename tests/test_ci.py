"""CI on CPU and GPU: the workflows run the README's commands, the GPU path can only fail
without CUDA, and the stored outputs are the same on every device."""

import os
import re
import shutil
import subprocess
import sys

import nbformat
import yaml
from nbval.plugin import get_sanitize_patterns

from tests.helpers import ROOT, readme_command

WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name):
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def steps_run(job):
    return [s["run"] for s in job["steps"] if "run" in s]


def test_cpu_workflow_runs_ci_run_on_a_hosted_runner_with_a_pip_cache():
    wf = workflow("ci.yml")
    assert {"push", "pull_request"} <= set(wf["on"])
    (job,) = wf["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest" and job["timeout-minutes"] <= 30
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["cache"] == "pip"
    assert ".ci/constraints.txt" in setup["with"]["cache-dependency-path"]
    assert steps_run(job) == [".ci/run"]
    assert job["env"]["PIP_EXTRA_INDEX_URL"].endswith("/whl/cpu")


def test_gpu_workflow_runs_only_when_asked_on_a_gpu_runner():
    wf = workflow("gpu.yml")
    assert set(wf["on"]) == {"workflow_dispatch", "pull_request"}  # never on push
    assert wf["on"]["pull_request"]["types"] == ["labeled"]
    (job,) = wf["jobs"].values()
    assert {"self-hosted", "gpu"} <= set(job["runs-on"])
    assert "github.event.label.name == 'gpu'" in job["if"]
    assert steps_run(job) == [".ci/run-gpu"]
    text = (WORKFLOWS / "gpu.yml").read_text()
    assert "PIP_CONSTRAINT" not in text and "GATHER_COURSE_DEVICE" not in text


def test_every_check_in_ci_run_can_fail_the_run():
    """Under ``set -e`` a command that fails before ``&&`` does not stop the script: each
    check stands on its own line (a lint failure once passed CI that way)."""
    lines = [line.split("#")[0].strip() for line in script_lines("run")]
    for check in ("ruff check", "ruff format --check", "lint-imports", "pip check", "pytest"):
        found = [line for line in lines if check in line]
        assert found, check
        assert all("&&" not in line.split(check)[1] for line in found), found


def test_release_workflow_publishes_a_tag_with_trusted_publishing_and_no_token():
    wf = workflow("release.yml")
    assert wf["on"] == {"push": {"tags": ["v*"]}}
    assert wf["permissions"] == {"contents": "read"}
    build, publish = wf["jobs"]["build"], wf["jobs"]["publish"]
    assert any("python -m build" in run for run in steps_run(build))
    assert publish["needs"] == "build" and publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}  # PyPI trusts the OpenID token
    (uses,) = [s["uses"] for s in publish["steps"] if "pypa/" in s.get("uses", "")]
    assert uses.startswith("pypa/gh-action-pypi-publish@")
    text = (WORKFLOWS / "release.yml").read_text()
    assert not re.search(r"\$\{\{\s*secrets\.|password:|api-token", text)


def script_lines(name):
    return (ROOT / ".ci" / name).read_text().splitlines()


def test_both_ci_scripts_install_and_test_with_the_readme_commands_and_check_the_install():
    for name in ("run", "run-gpu"):
        lines = script_lines(name)
        assert os.access(ROOT / ".ci" / name, os.X_OK), name
        setup, test = lines.index(readme_command("test-setup")), lines.index(readme_command("test"))
        assert lines[setup + 1].startswith("python -m pip check") and test > setup + 1, name
    gpu = "\n".join(script_lines("run-gpu"))
    assert "export GATHER_COURSE_REQUIRE_CUDA=1" in gpu
    assert "unset PIP_CONSTRAINT GATHER_COURSE_DEVICE" in gpu
    assert gpu.index("nvidia-smi") < gpu.index(readme_command("test-setup"))


def test_gpu_script_stops_before_installing_on_a_machine_without_nvidia_driver(tmp_path):
    (tmp_path / ".ci").mkdir()
    shutil.copy2(ROOT / ".ci" / "run-gpu", tmp_path / ".ci" / "run-gpu")
    bin_dir = tmp_path / "bin"  # a PATH with dirname, and no nvidia-smi
    bin_dir.mkdir()
    os.symlink(shutil.which("dirname"), bin_dir / "dirname")
    r = subprocess.run(
        [shutil.which("bash"), str(tmp_path / ".ci" / "run-gpu")],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1
    assert "nvidia-smi is not on PATH" in r.stderr and "docs/ci.md" in r.stderr
    assert not (tmp_path / ".venv").exists()


def run_pytest_collect(env_extra):
    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "tests/test_reference.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_required_cuda_run_refuses_to_start_on_the_cpu():
    r = run_pytest_collect({"GATHER_COURSE_REQUIRE_CUDA": "1", "GATHER_COURSE_DEVICE": "cpu"})
    assert r.returncode == 4  # pytest's usage error: nothing ran
    assert "GATHER_COURSE_REQUIRE_CUDA is set" in r.stderr + r.stdout
    import torch

    if not torch.cuda.is_available():
        r = run_pytest_collect({"GATHER_COURSE_REQUIRE_CUDA": "1"})
        assert r.returncode == 4 and "sees no CUDA device" in r.stderr + r.stdout


def sanitize(text):
    rules = get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text())
    for regex, replace in rules:
        text = re.sub(regex, replace, text)
    return text


def test_sanitize_file_makes_cuda_reprs_read_like_cpu_ones():
    import torch

    pairs = [
        ("tensor([1, 2])", "tensor([1, 2], device='cuda:0')"),
        (
            "tensor([[0.5000]], dtype=torch.float64)",
            "tensor([[0.5000]], device='cuda:0', dtype=torch.float64)",
        ),
        ("tensor(2., grad_fn=<SumBackward0>)", "tensor(2., device='cuda', grad_fn=<SumBackward0>)"),
        (
            "tensor([], size=(0, 3), dtype=torch.int64)",
            "tensor([], device='cuda:1', size=(0, 3), dtype=torch.int64)",
        ),
    ]
    for cpu, cuda in pairs:
        assert sanitize(cuda) == sanitize(cpu) == cpu
    assert repr(torch.tensor([[0.5]], dtype=torch.float64)) == pairs[1][0]
    assert sanitize("<Figure at 0x7f3a2b4c5d60>") == "<Figure at 0xADDRESS>"


def test_sanitize_file_reads_index_selects_refusal_alike_on_both_devices():
    """Lecture 01 prints what this machine raises for a 2-D index_select index: the CPU's
    IndexError here (checked against the installed torch), CUDA's RuntimeError as the first
    GPU run printed it (../shared/gpu-run/nb_en.log). Any other message still differs."""
    import torch

    try:
        torch.arange(12).reshape(3, 4).index_select(1, torch.tensor([[0, 5], [11, 6]]))
    except IndexError as err:
        cpu = f"IndexError - {err}"
    cuda = "RuntimeError - Index is supposed to be an empty tensor or a vector"
    assert sanitize(cpu) == sanitize(cuda) != cpu
    assert (
        sanitize("RuntimeError - Index is out of bounds") == "RuntimeError - Index is out of bounds"
    )


def compared_text(cell):
    """The outputs nbval compares for a cell, as text (images and tracebacks left out)."""
    if "nbval-ignore-output" in cell.metadata.get("tags", []):
        return ""
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts += [v for k, v in out.data.items() if k.startswith("text/")]
        elif out.output_type == "error":
            parts.append(out.evalue)
    return "\n".join(parts)


def test_compared_outputs_name_no_device():
    paths = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
        (ROOT / "solutions").glob("*/*.ipynb")
    )
    for path in paths:
        for cell in nbformat.read(path, as_version=4).cells:
            text = compared_text(cell)
            assert not re.search(r"\b(cpu|cuda)\b|device\(type=", text, re.I), (
                f"{path.name}: {cell.source[:60]!r} shows a device in a compared output: {text[:200]!r}"
            )


def test_environment_yml_builds_on_binder_as_it_stands():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    # repo2docker copies the repository in before installing only when the pip section
    # names a local path; `-e .` is one, and installs the course's package.
    assert "-e ." in pip
    assert "python=3.11" in env["dependencies"]  # repo2docker reads an exact x.y
    assert env["channels"] == ["conda-forge"]
    assert not (ROOT / "binder").exists() and not (ROOT / ".binder").exists()  # would win


def test_cpu_ci_installs_the_sandbox_and_refuses_to_skip_it():
    script = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install -y -qq bubblewrap" in script
    assert "export GATHER_COURSE_REQUIRE_SANDBOX=1" in script
    assert script.index("GATHER_COURSE_REQUIRE_SANDBOX") < script.index("python -m pytest")


def test_ci_runs_the_tests_again_on_the_oldest_torch_pyproject_claims():
    """pyproject.toml's torch floor is tested, not only claimed: .ci/run calls .ci/run-floor,
    which reads the floor from pyproject.toml and runs the README's first two commands."""
    ci = script_lines("run")
    floor = "\n".join(script_lines("run-floor"))
    assert os.access(ROOT / ".ci" / "run-floor", os.X_OK)
    (at,) = [n for n, line in enumerate(ci) if line.startswith(readme_command("test-floor"))]
    assert at > ci.index(readme_command("test"))
    assert 'tomllib.load(open("pyproject.toml", "rb"))' in floor
    assert 'sed "s/^torch==.*/torch==$floor/" .ci/constraints.txt' in floor
    for command in ("test", "test-zh"):
        assert f"\n{readme_command(command)}\n" in floor + "\n", command
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [d for d in deps if re.fullmatch(r"torch>=\d+\.\d+", d)], "a floor .ci/run-floor reads"
