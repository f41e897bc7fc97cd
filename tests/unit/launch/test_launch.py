"""Tests of the launch analysis library (container commands, Slurm scripts, DeepSpeed).

Inputs are small inline snippets shaped like the user's seed manifests (shortened), so the
tests depend on nothing outside the repository.
"""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eksmllint.launch import (
    ArgPosition,
    analyse_container,
    expand_k8s_vars,
    is_slurm_script,
    k8s_env,
    parse_sbatch,
)
from eksmllint.launch.deepspeed import DeepSpeedConfig, DeepSpeedError, looks_like_deepspeed, parse_deepspeed
from eksmllint.launch.shell import Known, ShellState, eval_arith
from eksmllint.launch.slurm import parse_slurm_memory_mb, parse_slurm_time


def only(invs):
    assert len(invs) == 1, invs
    return invs[0]


# --------------------------------------------------------------------------- $(VAR)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("--rank=$(IDX)", "--rank=3"),
        ("$$(IDX)", "$(IDX)"),  # escaped
        ("$(MISSING)", "$(MISSING)"),  # undefined stays as written
        ("$(FROM_FIELD)", "$(FROM_FIELD)"),  # valueFrom: only known at run time
        ("cost $$5", "cost $5"),  # $$ is always an escaped $
        ("$(IDX", "$(IDX"),  # unterminated
        ("trailing $", "trailing $"),
        ("$(echo $(IDX))", "$(echo $(IDX))"),  # name runs to the first ')': "echo $(IDX"
        ("$HOME/$(IDX)", "$HOME/3"),
    ],
)
def test_expand_k8s_vars_follows_kubelet(text: str, expected: str) -> None:
    env = {"IDX": "3", "FROM_FIELD": None}
    assert expand_k8s_vars(text, env) == expected


def test_k8s_env_expands_in_order_and_propagates_unknown() -> None:
    env = k8s_env([("A", "x"), ("B", "$(A)-y"), ("C", None), ("D", "$(C)/z"), ("E", "$(F)"), ("F", "late")])
    assert env == {"A": "x", "B": "x-y", "C": None, "D": None, "E": "$(F)", "F": "late"}


# --------------------------------------------------------------------------- containers


def test_mpijob_launcher_command() -> None:
    command = [
        "mpirun",
        "--allow-run-as-root",
        "-np",
        "32",
        "-bind-to",
        "none",
        "-map-by",
        "slot",
        "-x",
        "NCCL_DEBUG=INFO",
        "-x",
        "FI_PROVIDER=efa",
        "-x",
        "LD_LIBRARY_PATH",
        "python",
        "/workspace/train_bert.py",
        "--batch_size=32",
        "--learning_rate",
        "3e-5",
    ]
    inv = only(analyse_container(command, None, {}))
    assert inv.launcher == "mpirun"
    assert inv.option("np").int_value() == 32
    assert inv.option("np").position == ArgPosition("command", 2)
    assert inv.option("np").value_position == ArgPosition("command", 3)
    assert inv.option("bind-to").value == "none"
    assert inv.option("map_by").value == "slot"
    assert inv.option("allow_run_as_root").value is None
    assert {k: o.value for k, o in inv.env.items()} == {
        "NCCL_DEBUG": "INFO",
        "FI_PROVIDER": "efa",
        "LD_LIBRARY_PATH": None,
    }
    assert inv.script == "/workspace/train_bert.py"
    assert inv.script_flag("batch_size").int_value() == 32
    assert inv.script_flag("learning-rate").value == "3e-5"


@pytest.mark.parametrize(
    ("flag", "canonical"), [("-n", "np"), ("-N", "npernode"), ("--npernode", "npernode"), ("-H", "host")]
)
def test_mpirun_option_aliases(flag: str, canonical: str) -> None:
    inv = only(analyse_container(["mpiexec", flag, "4", "./a.out"], None, {}))
    assert inv.option(canonical).value == "4"
    assert inv.script == "./a.out"


def test_mpirun_mca_pairs_do_not_swallow_the_program() -> None:
    inv = only(analyse_container(["mpirun", "--mca", "btl", "tcp,self", "-np", "2", "/opt/bench"], None, {}))
    assert inv.option("mca.btl").value == "tcp,self"
    assert inv.option("np").int_value() == 2
    assert inv.script == "/opt/bench"


def test_trainium_job_with_neuron_parallel_compile_and_completion_index() -> None:
    command = [
        "neuron_parallel_compile",
        "torchrun",
        "--nproc_per_node=32",
        "--nnodes=4",
        "--node_rank=$(JOB_COMPLETION_INDEX)",
        "--master_addr=$(MASTER_ADDR)",
        "--master_port=29500",
        "train_lora.py",
    ]
    args = [
        "--per_device_train_batch_size=1",
        "--gradient_accumulation_steps=16",
        "--bf16",
        "--output_dir=/shared/ckpt",
    ]
    env = {"NEURON_RT_NUM_CORES": "32", "MASTER_ADDR": None, "JOB_COMPLETION_INDEX": None}
    inv = only(analyse_container(command, args, env))
    assert inv.launcher == "torchrun"
    assert inv.wrappers == ("neuron_parallel_compile",)
    assert inv.option("nproc_per_node").int_value() == 32
    assert inv.option("nnodes").int_value() == 4
    rank = inv.option("node_rank")
    assert rank.value == "$(JOB_COMPLETION_INDEX)" and rank.resolved is None and rank.int_value() is None
    assert rank.raw == "--node_rank=$(JOB_COMPLETION_INDEX)"
    assert inv.script == "train_lora.py"
    assert inv.script_position == ArgPosition("command", 7)
    ga = inv.script_flag("gradient_accumulation_steps")
    assert ga.int_value() == 16 and ga.position == ArgPosition("args", 1)
    assert inv.script_flag("bf16").is_enabled() is True
    assert inv.precision() == {"bf16"}
    assert inv.script_flag("output_dir").value == "/shared/ckpt"


def test_literal_env_values_are_expanded_into_options() -> None:
    inv = only(analyse_container(["torchrun", "--nproc_per_node=$(GPUS)", "t.py"], None, {"GPUS": "8"}))
    assert inv.option("nproc_per_node").int_value() == 8
    assert inv.option("nproc_per_node").raw == "--nproc_per_node=$(GPUS)"


def test_volcano_torchrun() -> None:
    inv = only(analyse_container(["torchrun", "--nproc_per_node=8", "--nnodes=4", "train.py"], None, {}))
    assert (inv.option("nproc_per_node").int_value(), inv.option("nnodes").int_value(), inv.script) == (
        8,
        4,
        "train.py",
    )
    assert inv.under_srun is None and inv.source.kind == "exec"


def test_space_separated_and_dashed_options_are_canonical() -> None:
    inv = only(
        analyse_container(
            ["torchrun", "--nproc-per-node", "4", "--rdzv-endpoint", "h:29400", "--standalone", "x.py", "--fp16"],
            None,
            {},
        )
    )
    assert inv.option("nproc_per_node").int_value() == 4
    assert inv.option("rdzv_endpoint").value == "h:29400"
    assert inv.option("standalone").value is None
    assert inv.script == "x.py"
    assert inv.precision() == {"fp16"}


def test_python_module_launchers() -> None:
    inv = only(
        analyse_container(["python3", "-u", "-m", "torch.distributed.run", "--nnodes", "2", "train.py"], None, {})
    )
    assert inv.launcher == "torchrun" and inv.program == "python3 -u -m torch.distributed.run"
    assert inv.option("nnodes").int_value() == 2
    inv = only(
        analyse_container(
            ["python", "-m", "torch.distributed.launch", "--use_env", "--nproc_per_node=2", "a.py"], None, {}
        )
    )
    assert inv.launcher == "torchrun" and inv.option("use_env") is not None and inv.script == "a.py"
    inv = only(analyse_container(["torchrun", "-m", "pkg.train", "--bf16"], None, {}))
    assert inv.script == "pkg.train" and inv.script_module
    inv = only(analyse_container(["python", "-m", "pkg.train", "--lr", "-1"], None, {}))
    assert inv.launcher == "python" and inv.script == "pkg.train" and inv.script_flag("lr").value == "-1"


def test_args_alone_when_command_is_none() -> None:
    inv = only(analyse_container(None, ["torchrun", "--nproc_per_node", "2", "t.py"], {}))
    assert inv.option("nproc_per_node").position == ArgPosition("args", 1)
    # the image entrypoint is unknown: options alone are not guessed at
    assert analyse_container(None, ["--nproc_per_node=2", "t.py"], {}) == []


def test_deepspeed_and_accelerate() -> None:
    inv = only(
        analyse_container(
            [
                "deepspeed",
                "--num_gpus",
                "8",
                "--num_nodes=2",
                "train.py",
                "--deepspeed",
                "--deepspeed_config",
                "ds.json",
            ],
            None,
            {},
        )
    )
    assert inv.launcher == "deepspeed"
    assert (inv.option("num_gpus").int_value(), inv.option("num_nodes").int_value()) == (8, 2)
    assert inv.deepspeed_config().value == "ds.json"
    inv = only(
        analyse_container(
            [
                "accelerate",
                "launch",
                "--num_processes",
                "16",
                "--num_machines",
                "2",
                "--mixed_precision",
                "fp16",
                "--config_file",
                "c.yaml",
                "t.py",
            ],
            None,
            {},
        )
    )
    assert inv.launcher == "accelerate"
    assert inv.option("num_processes").int_value() == 16 and inv.option("num_machines").int_value() == 2
    assert inv.option("config_file").value == "c.yaml"
    assert inv.precision() == {"fp16"}
    inv = only(
        analyse_container(
            ["python", "train.py", "--deepspeed", "cfg/ds.json", "--bf16", "False", "--precision", "16-mixed"], None, {}
        )
    )
    assert inv.deepspeed_config().value == "cfg/ds.json"
    assert inv.script_flag("bf16").is_enabled() is False
    assert inv.precision() == {"fp16"}


def test_wrappers_are_peeled() -> None:
    command = [
        "env",
        "A=1",
        "timeout",
        "-s",
        "KILL",
        "3600",
        "numactl",
        "--cpunodebind=0",
        "--membind",
        "0",
        "stdbuf",
        "-oL",
        "nohup",
        "time",
        "torchrun",
        "--nproc_per_node=2",
        "t.py",
    ]
    inv = only(analyse_container(command, None, {}))
    assert inv.wrappers == ("env", "timeout", "numactl", "stdbuf", "nohup", "time")
    assert inv.env["A"].value == "1"
    assert inv.option("nproc_per_node").int_value() == 2
    inv = only(
        analyse_container(["uv", "run", "--frozen", "-m", "torch.distributed.run", "--nnodes", "2", "x.py"], None, {})
    )
    assert inv.launcher == "torchrun" and inv.wrappers == ("uv run",)


def test_srun_inside_a_container() -> None:
    inv = only(
        analyse_container(
            ["srun", "-N2", "--ntasks-per-node", "1", "torchrun", "--nproc_per_node", "8", "x.py"], None, {}
        )
    )
    assert inv.launcher == "torchrun" and inv.wrappers == ("srun",)
    assert inv.under_srun.int_option("nodes") == 2
    assert inv.under_srun.int_option("ntasks-per-node") == 1
    step = only(analyse_container(["srun", "-l", "hostname"], None, {}))
    assert step.launcher == "srun" and step.script == "hostname"


def test_bash_c_script_positions_and_variables() -> None:
    script = textwrap.dedent(
        """\
        set -ex
        # download first
        export NPROC=4
        cd /workspace && \\
          torchrun --nproc_per_node=$NPROC \\
            --nnodes=$NNODES --node_rank=$(RANK_IDX) \\
            train.py --bf16 --gradient_accumulation_steps $GA
        """
    )
    inv = only(analyse_container(["/bin/bash", "-lc"], [script], {"NNODES": "2", "RANK_IDX": None, "GA": "8"}))
    assert inv.wrappers == ("bash -c",) and inv.source.kind == "shell"
    nproc = inv.option("nproc_per_node")
    assert (nproc.value, nproc.resolved, nproc.int_value()) == ("$NPROC", "4", 4)
    assert nproc.position == ArgPosition("args", 0, 4)
    assert inv.option("nnodes").int_value() == 2 and inv.option("nnodes").position.script_line == 5
    assert inv.option("node_rank").resolved is None
    ga = inv.script_flag("gradient_accumulation_steps")
    assert ga.int_value() == 8 and ga.position.script_line == 6
    assert inv.precision() == {"bf16"}


def test_shell_lists_pipes_exec_and_comments() -> None:
    script = "pip install x; exec python /app/train.py --epochs 3 2>&1 | tee log.txt # trailing\n# torchrun --nproc_per_node=99 x.py"
    inv = only(analyse_container(["sh", "-c", script], None, {}))
    assert inv.launcher == "python" and inv.script == "/app/train.py"
    assert inv.wrappers == ("sh -c", "exec")
    assert inv.script_flag("epochs").int_value() == 3


def test_mpirun_running_a_shell_script_reports_both() -> None:
    invs = analyse_container(["mpirun", "-np", "2", "bash", "-c", "cd /x && python train.py --fp16"], None, {})
    assert [i.launcher for i in invs] == ["mpirun", "python"]
    assert invs[0].option("np").int_value() == 2 and invs[0].script is None
    assert invs[1].wrappers == ("mpirun", "bash -c") and invs[1].precision() == {"fp16"}


@pytest.mark.parametrize(
    "command",
    [
        ["aws", "s3", "sync", "s3://b/x", "/shared"],
        ["python", "-m", "pip", "install", "torch"],
        ["python", "-c", "import torch"],
        ["bash", "run.sh"],
        ["$(LAUNCHER)", "x.py"],
        [],
    ],
)
def test_unknown_shapes_are_skipped(command: list[str]) -> None:
    assert analyse_container(command, None, {"LAUNCHER": None}) == []


def test_exec_form_does_not_expand_shell_variables() -> None:
    # no shell: torchrun really receives the text "$SLURM_NTASKS_PER_NODE"
    inv = only(analyse_container(["torchrun", "--nproc_per_node=$SLURM_NTASKS_PER_NODE", "t.py"], None, {}))
    assert inv.option("nproc_per_node").value == "$SLURM_NTASKS_PER_NODE"
    assert inv.option("nproc_per_node").int_value() is None


def test_non_string_items_do_not_break_analysis() -> None:
    inv = only(analyse_container(["mpirun", "-np", 8, "./a.out", None, True], None, {}))
    assert inv.option("np").int_value() == 8


# --------------------------------------------------------------------------- slurm

SLURM_JOB = textwrap.dedent(
    """\
    #!/bin/bash
    # distributed fine-tune
    #SBATCH --job-name=llama3-finetune
    #SBATCH --partition=gpu-a100
    #SBATCH --nodes=4
    #SBATCH --ntasks-per-node=8
    #SBATCH --gpus-per-node=8
    #SBATCH --cpus-per-task=12
    #SBATCH --mem=1100G
    #SBATCH --time=48:00:00
    #SBATCH --output=/shared/logs/%x-%j.out
    module load cuda/12.1
    export MASTER_ADDR=$(scontrol show hostname $SLURM_NODELIST | head -n 1)
    export MASTER_PORT=29500
    export WORLD_SIZE=$((SLURM_NNODES * SLURM_NTASKS_PER_NODE))
    srun --ntasks=$WORLD_SIZE \\
        --ntasks-per-node=$SLURM_NTASKS_PER_NODE \\
        torchrun \\
            --nnodes=$SLURM_NNODES \\
            --nproc_per_node=$SLURM_NTASKS_PER_NODE \\
            --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT \\
            train_llama.py \\
                --per_device_train_batch_size 1 \\
                --gradient_accumulation_steps 8 \\
                --bf16 \\
                --deepspeed configs/ds_config_zero3.json
    """
)


def test_slurm_directives() -> None:
    s = parse_sbatch(SLURM_JOB)
    assert s.errors == []
    assert (s.nodes, s.ntasks_per_node, s.gpus_per_node, s.cpus_per_task) == (4, 8, 8, 12)
    assert s.mem_mb == 1100 * 1024
    assert s.time_seconds == 48 * 3600
    assert (s.partition, s.job_name, s.output) == ("gpu-a100", "llama3-finetune", "/shared/logs/%x-%j.out")
    assert s.directive("nodes").line == 5
    assert s.directive("--ntasks-per-node").line == 6
    assert s.derived["SLURM_NTASKS"] == "32"


def test_slurm_srun_torchrun_resolution_and_lines() -> None:
    s = parse_sbatch(SLURM_JOB)
    inv = only(s.invocations)
    assert inv.launcher == "torchrun" and inv.source.kind == "slurm"
    assert inv.source.position.script_line == 18
    srun = inv.under_srun
    npn = srun.option("ntasks_per_node")
    assert (npn.value, npn.resolved, npn.int_value()) == ("$SLURM_NTASKS_PER_NODE", "8", 8)
    assert npn.position.script_line == 17
    assert srun.int_option("ntasks") == 32  # through WORLD_SIZE=$((...))
    nproc = inv.option("nproc_per_node")
    assert (nproc.value, nproc.int_value(), nproc.position.script_line) == ("$SLURM_NTASKS_PER_NODE", 8, 20)
    assert inv.option("rdzv_endpoint").resolved is None  # MASTER_ADDR is a command substitution
    ga = inv.script_flag("gradient_accumulation_steps")
    assert ga.int_value() == 8 and ga.position.script_line == 24
    assert inv.precision() == {"bf16"}
    assert inv.deepspeed_config().value == "configs/ds_config_zero3.json"
    assert s.tasks_per_node(srun) == 8


def test_slurm_assignments_are_recorded_with_lines() -> None:
    s = parse_sbatch(SLURM_JOB)
    by_name = {a.name: a for a in s.assignments}
    assert by_name["WORLD_SIZE"].resolved == "32" and by_name["WORLD_SIZE"].line == 15
    assert by_name["MASTER_ADDR"].resolved is None and by_name["MASTER_ADDR"].exported
    assert s.variables["MASTER_PORT"] == "29500"


def test_short_directive_forms_and_gres() -> None:
    s = parse_sbatch(
        "#!/bin/bash\n#SBATCH -N 2 -n 16\n#SBATCH -c 4\n#SBATCH -p gpu -J job\n#SBATCH --gres=gpu:a100:8\n#SBATCH --exclusive\n#SBATCH -t 2-12\nsrun hostname\n"
    )
    assert s.errors == []
    assert (s.nodes, s.ntasks, s.cpus_per_task, s.partition, s.job_name) == (2, 16, 4, "gpu", "job")
    assert s.gpus_per_node == 8 and s.exclusive
    assert s.time_seconds == (2 * 24 + 12) * 3600
    assert s.tasks_per_node(s.invocations[0].under_srun) == 8
    s = parse_sbatch("#SBATCH --nodes 3\n#SBATCH -G 8\n")
    assert s.nodes == 3 and s.gpus == 8


def test_directives_after_first_command_are_ignored() -> None:
    s = parse_sbatch("#!/bin/bash\n#SBATCH --nodes=2\necho hi\n#SBATCH --nodes=8\n")
    assert s.nodes == 2
    assert [d.line for d in s.ignored_directives] == [4]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 1800),
        ("10:30", 630),
        ("48:00:00", 172800),
        ("01:02:03", 3723),
        ("2-12", 216000),
        ("1-02:03", 93780),
        ("1-02:03:04", 93784),
        ("UNLIMITED", None),
    ],
)
def test_slurm_time_formats(text: str, seconds: int | None) -> None:
    assert parse_slurm_time(text) == seconds


@pytest.mark.parametrize("text", ["abc", "1:2:3:4", "-5", ""])
def test_slurm_time_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        parse_slurm_time(text)


def test_memory_units() -> None:
    assert [parse_slurm_memory_mb(v) for v in ("1100G", "512", "2T", "2048K", "64GB")] == [
        1126400,
        512,
        2097152,
        2,
        65536,
    ]


@pytest.mark.parametrize(
    ("directive", "fragment"),
    [
        ("--nodes=four", "invalid node count"),
        ("--time=soon", "invalid time"),
        ("--nodse=4", "unrecognized option"),
        ("--ntasks-per-node=eight", "expected an integer"),
        ("--mem=lots", "invalid memory"),
        ("--partition", "requires an argument"),
        ("--job-name='unterminated", "No closing quotation"),
    ],
)
def test_bad_directives_are_errors_with_lines(directive: str, fragment: str) -> None:
    s = parse_sbatch(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH {directive}\nsrun true\n")
    assert [ln for ln, _ in s.errors] == [3]
    assert fragment in s.errors[0][1]


def test_unterminated_quote_in_body_is_an_error() -> None:
    s = parse_sbatch('#!/bin/bash\n#SBATCH -N 1\necho ok\necho "oops\nsrun x\n')
    assert s.errors and s.errors[0][0] == 4


def test_getopt_prefix_abbreviation_is_accepted() -> None:
    s = parse_sbatch("#SBATCH --ntasks-per-n=4\n")
    assert s.errors == [] and s.ntasks_per_node == 4


def test_arrays_and_indirect_launcher() -> None:
    script = textwrap.dedent(
        """\
        #!/bin/bash
        #SBATCH --nodes=2
        GPUS_PER_NODE=8
        AUTO_RESUME=""
        if [ -d "/opt/sagemaker_cluster" ]; then
            AUTO_RESUME="--auto-resume=1"
        fi
        if [ -n "$IMAGE" ]; then
            declare -a ARGS=(
                --container-image $IMAGE
            )
        fi
        declare -a TORCHRUN_ARGS=(
            --nproc_per_node=$GPUS_PER_NODE
            --nnodes=$SLURM_JOB_NUM_NODES  # two nodes
        )
        export TORCHRUN=torchrun
        srun ${AUTO_RESUME} -l "${ARGS[@]}" ${TORCHRUN} "${TORCHRUN_ARGS[@]}" train.py --fp16
        """
    )
    s = parse_sbatch(script)
    inv = only(s.invocations)
    assert inv.launcher == "torchrun" and inv.under_srun.option("label") is not None
    nproc = inv.option("nproc_per_node")
    assert nproc.int_value() == 8 and nproc.position.script_line == 14  # the array element's line
    assert inv.option("nnodes").int_value() == 2
    assert inv.script == "train.py" and inv.precision() == {"fp16"}


def test_conditional_values_are_not_guessed() -> None:
    script = '#SBATCH -N 1\nN=8\nif [ -n "$BIG" ]; then N=16; fi\n[ -z "$X" ] && M=2\nsrun torchrun --nproc_per_node=$N --nnodes=$M t.py\n'
    inv = only(parse_sbatch(script).invocations)
    assert inv.option("nproc_per_node").resolved is None
    assert inv.option("nnodes").resolved is None


def test_same_value_in_every_branch_stays_known_only_if_assigned_before() -> None:
    script = "N=8\nif true; then N=8; fi\nsrun torchrun --nproc_per_node=$N t.py\n"
    assert only(parse_sbatch(script).invocations).option("nproc_per_node").int_value() == 8


def test_source_taints_but_activate_does_not() -> None:
    base = "#SBATCH -N 1\nG=8\n{src}\nsrun torchrun --nproc_per_node=$G --nnodes=$SLURM_NNODES t.py\n"
    inv = only(parse_sbatch(base.format(src="source /fsx/env/bin/activate")).invocations)
    assert inv.option("nproc_per_node").int_value() == 8
    inv = only(parse_sbatch(base.format(src=". ./cluster-env.sh")).invocations)
    assert inv.option("nproc_per_node").resolved is None
    assert inv.option("nnodes").int_value() == 1  # directive-derived values survive


def test_heredoc_bodies_are_not_commands() -> None:
    script = "cat <<EOF > run.sh\nsrun torchrun --nproc_per_node=99 x.py\nEOF\nsrun torchrun --nproc_per_node=4 y.py\n"
    inv = only(parse_sbatch(script).invocations)
    assert inv.script == "y.py" and inv.source.position.script_line == 4


def test_srun_step_running_a_non_launcher() -> None:
    s = parse_sbatch("#SBATCH -N 2\nsrun --ntasks-per-node=1 --container-image img.sqsh bash run.sh\n")
    inv = only(s.invocations)
    assert inv.launcher == "srun" and inv.script == "run.sh"
    assert inv.option("container_image").value == "img.sqsh"


def test_top_level_mpirun_arithmetic() -> None:
    s = parse_sbatch(
        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\nmpirun -n $((8 * SLURM_JOB_NUM_NODES)) -N 8 -x FI_PROVIDER=efa ./all_reduce_perf -b 8\n"
    )
    inv = only(s.invocations)
    assert inv.launcher == "mpirun" and inv.option("np").int_value() == 16
    assert inv.option("np").value == "$((8 * SLURM_JOB_NUM_NODES))"
    assert inv.env["FI_PROVIDER"].value == "efa"


def test_srun_bash_c_in_a_crlf_script_sees_only_exported_variables() -> None:
    script = (
        "#!/bin/bash\r\n#SBATCH --nodes=2\r\nGPUS=8\r\nexport NP=4\r\n"
        "srun --container-image x.sqsh bash -c '\r\n  cd /w &&\r\n"
        "  torchrun --nproc_per_node=$NP --nnodes=$SLURM_NNODES t.py --g $GPUS'\r\n"
    )
    s = parse_sbatch(script)
    assert s.errors == []
    inv = only(s.invocations)
    assert inv.wrappers == ("srun", "bash -c")
    assert inv.option("nproc_per_node").int_value() == 4
    assert inv.option("nproc_per_node").position.script_line == 7  # 1-based line in the file
    assert inv.option("nnodes").int_value() == 2  # SLURM_* are in the job environment
    assert inv.script_flag("g").resolved is None  # GPUS is not exported to the child shell


def test_python_mpi4py_runs_the_script() -> None:
    inv = only(analyse_container(["mpirun", "-np", "4", "python", "-m", "mpi4py", "train.py", "--bf16"], None, {}))
    assert inv.launcher == "mpirun" and inv.script == "train.py" and not inv.script_module
    assert inv.script_flag("bf16") is not None
    inv = only(analyse_container(["python", "-m", "mpi4py", "train.py", "--bf16"], None, {}))
    assert inv.launcher == "python" and inv.script == "train.py" and inv.precision() == {"bf16"}


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("2 * (3 + 4)", 14),
        ("A * B", 32),
        ("$A + ${B}", 12),
        ("-7 / 2", -3),
        ("7 % 3", 1),
        ("2 ** 10", 1024),
        ("1 / 0", None),
        ("A * UNKNOWN", None),
        ("A ? 1 : 2", None),
    ],
)
def test_arithmetic(expr: str, value: int | None) -> None:
    state = ShellState({"A": Known("4"), "B": Known("8")})
    assert eval_arith(expr, state) == value


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("${A}", "a.b.c"),
        ("${A#a.}", "b.c"),
        ("${A%.c}", "a.b"),
        ("${A#zzz}", "a.b.c"),
        ("${EMPTY:-dflt}", "dflt"),
        ("${EMPTY-dflt}", ""),
        ("${A:+alt}", "alt"),
        ("${EMPTY:+alt}", ""),
        ("${A#*.}", None),  # glob patterns are not evaluated
        ("${#A}", None),
        ("${FROM_ENV:-dflt}", None),  # set or not depends on the submitting environment
        ("$(hostname)", None),
        ("x${ARR[1]}y", "xqy"),
    ],
)
def test_parameter_expansion(expr: str, value: str | None) -> None:
    s = parse_sbatch(f'A=a.b.c\nEMPTY=""\nARR=(p q)\nV="{expr}"\n')
    assert s.variables.get("V") == value


def test_is_slurm_script() -> None:
    assert is_slurm_script("jobs/train.sbatch", "echo no directives")
    assert is_slurm_script("x.SLURM", "")
    assert is_slurm_script("run.sh", "#!/bin/bash\n\n# comment\n#SBATCH -N 2\nsrun x\n")
    assert not is_slurm_script("run.sh", "#!/bin/bash\necho hi\n#SBATCH -N 2\n")
    assert not is_slurm_script("deploy.sh", "#!/bin/bash\nkubectl apply -f x.yaml\n")


# --------------------------------------------------------------------------- deepspeed

DS_CONFIG = textwrap.dedent(
    """\
    {
      "bf16": {
        "enabled": true
      },
      "zero_optimization": {
        "stage": 3,
        "offload_optimizer": {"device": "cpu", "pin_memory": true},
        "offload_param": {"device": "none"},
        "reduce_bucket_size": "auto",
        "sub_group_size": 1e9
      },
      "gradient_accumulation_steps": 32,
      "gradient_clipping": 1.0,
      "train_micro_batch_size_per_gpu": 1,
      "communication_data_type": "bf16"
    }
    """
)


def test_deepspeed_config_values_and_lines() -> None:
    cfg = parse_deepspeed(DS_CONFIG, "ds.json")
    assert isinstance(cfg, DeepSpeedConfig)
    assert cfg.precision() == {"bf16"}
    assert (cfg.grad_accum(), cfg.micro_batch(), cfg.train_batch(), cfg.zero_stage()) == (32, 1, None, 3)
    assert cfg.line_of("gradient_accumulation_steps") == 12
    assert cfg.line_of("bf16.enabled") == 3
    assert cfg.line_of("zero_optimization.stage") == 6
    assert cfg.offload_devices() == {"optimizer": "cpu"}
    assert cfg.gradient_clipping == 1.0
    assert cfg.filename == "ds.json"


def test_deepspeed_auto_values_and_yaml() -> None:
    text = "train_batch_size: auto\ntrain_micro_batch_size_per_gpu: auto\nfp16:\n  enabled: auto\nzero_optimization:\n  stage: 2\n"
    cfg = parse_deepspeed(text, "ds.yaml")
    assert isinstance(cfg, DeepSpeedConfig)
    assert cfg.train_batch() is None and cfg.micro_batch() is None
    assert cfg.precision() == set() and cfg.auto_precision() == {"fp16"}
    assert cfg.zero_stage() == 2 and cfg.line_of("zero_optimization.stage") == 6


def test_deepspeed_both_precisions_are_reported() -> None:
    cfg = parse_deepspeed('{"fp16": {"enabled": true}, "bfloat16": {"enabled": true}}', "x.json")
    assert cfg.precision() == {"fp16", "bf16"}


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ('{\n  "train_batch_size": 8,\n  "zero_optimization": {"stage": }\n}', 3, "invalid JSON"),
        ('{\n  "fp16": {"enabled": true},\n  "fp16": {"enabled": false}\n}', 3, "duplicate key"),
        ('{\n  "train_micro_batch_size_per_gpu": "many"\n}', 2, "train_micro_batch_size_per_gpu"),
        ('{\n  "zero_optimization": {\n    "stage": "three"\n  }\n}', 3, "zero_optimization.stage"),
        ("[1, 2]", 1, "mapping"),
    ],
)
def test_deepspeed_errors_carry_lines(text: str, line: int, fragment: str) -> None:
    err = parse_deepspeed(text, "bad.json")
    assert isinstance(err, DeepSpeedError)
    assert err.line == line and fragment in err.message


def test_deepspeed_yaml_error_position() -> None:
    err = parse_deepspeed("zero_optimization:\n  stage: [3\n", "ds.yaml")
    assert isinstance(err, DeepSpeedError) and err.line is not None and err.line >= 2


def test_looks_like_deepspeed() -> None:
    assert looks_like_deepspeed({"zero_optimization": {"stage": 2}})
    assert looks_like_deepspeed({"train_micro_batch_size_per_gpu": 4})
    assert looks_like_deepspeed({"gradient_accumulation_steps": 4, "bf16": {"enabled": True}})
    # HF TrainingArguments JSON uses the same names with plain booleans
    assert not looks_like_deepspeed({"gradient_accumulation_steps": 4, "bf16": True})
    assert not looks_like_deepspeed(["zero_optimization"])


# --------------------------------------------------------------------------- robustness

_FRAGMENTS = list("abc $(){}[]\"'\\`|&;<>#=-_\n\t0123456789*+/%!@:.,~^") + [
    "srun ",
    "torchrun ",
    "--nproc_per_node=",
    "#SBATCH ",
    "$((",
    "<<EOF\n",
    "EOF\n",
    "declare -a X=(",
    "\\\n",
    "if ",
    "fi\n",
    "${X:-",
    "export ",
    "bash -c '",
    "--nodes=",
    "$SLURM_NNODES",
]
_SHELLISH = st.lists(st.sampled_from(_FRAGMENTS), max_size=80).map("".join)
_FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(
    st.one_of(st.none(), st.lists(st.one_of(st.text(max_size=40), _SHELLISH, st.integers(), st.none()), max_size=12)),
    st.one_of(st.none(), st.lists(st.one_of(st.text(max_size=40), _SHELLISH), max_size=12)),
    st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.text(max_size=12)), max_size=4),
)
def test_analyse_container_never_raises(command, args, env) -> None:
    invs = analyse_container(command, args, env)
    assert isinstance(invs, list)


@_FAST
@given(
    st.lists(
        st.sampled_from(
            [
                "bash",
                "-c",
                "torchrun",
                "srun",
                "mpirun",
                "-np",
                "-x",
                "python",
                "-m",
                "--",
                "--nnodes",
                "8",
                "t.py",
                "env",
                "A=1",
                "exec",
                "timeout",
                "uv",
                "run",
                "accelerate",
                "launch",
                "deepspeed",
                "$(X)",
                "--mca",
            ]
        ),
        max_size=14,
    )
)
def test_analyse_container_never_raises_on_launcher_words(command) -> None:
    for inv in analyse_container(command, None, {"X": None}):
        assert inv.launcher in {"torchrun", "mpirun", "deepspeed", "accelerate", "srun", "python"}


@_FAST
@given(st.one_of(st.text(max_size=300), _SHELLISH))
def test_parse_sbatch_never_raises(text: str) -> None:
    s = parse_sbatch(text)
    assert all(isinstance(line, int) and isinstance(msg, str) for line, msg in s.errors)
    assert is_slurm_script("x.sh", text) in (True, False)


@_FAST
@given(st.one_of(st.text(max_size=200), st.text(alphabet='{}[]":,0123456789 \nabfeuotrs-', max_size=200)))
def test_parse_deepspeed_never_raises(text: str) -> None:
    assert isinstance(parse_deepspeed(text, "x.json"), (DeepSpeedConfig, DeepSpeedError))
    assert isinstance(parse_deepspeed(text, "x.yaml"), (DeepSpeedConfig, DeepSpeedError))


@_FAST
@given(
    st.text(alphabet=st.characters(blacklist_characters="$"), max_size=50),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)
def test_expand_without_dollar_is_identity(text: str, env) -> None:
    assert expand_k8s_vars(text, env) == text


def test_a_run_time_word_in_a_launcher_variable_is_one_unknown_word():
    from eksmllint.launch import analyse_container

    script = (
        'LAUNCHER="torchrun --nproc_per_node 8 --nnodes 2 --rdzv_endpoint $(hostname):29500"\n'
        'srun bash -c "$LAUNCHER train.py --fp16"\n'
    )
    (inv,) = analyse_container(["bash", "-c", script], None, {})
    assert inv.launcher == "torchrun" and inv.script == "train.py" and inv.under_srun is not None
    assert inv.option("nproc_per_node").int_value() == 8 and inv.option("nnodes").int_value() == 2
    assert inv.option("rdzv_endpoint").resolved is None  # known to be there, its value is not
