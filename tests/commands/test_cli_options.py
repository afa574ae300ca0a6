"""Command-line options: counts refused at parse time, the output path checked first, the module's command list."""

import pytest

from sgi_core import cli
from sgi_core.cli import build_parser, main
from sgi_core.commands.score import run as cmd_score
from sgi_core.errors import SGIInputError


@pytest.mark.parametrize("argv, message", [
    (["score", "in.csv", "-o", "out.csv", "--batch-size", "0"],
     "argument --batch-size: must be a whole number >= 1; got '0'"),
    (["score", "in.csv", "-o", "out.csv", "--chunk-rows", "-5"],
     "argument --chunk-rows: must be a whole number >= 1; got '-5'"),
    (["score", "in.csv", "-o", "out.csv", "--chunk-rows", "1e3"],
     "argument --chunk-rows: must be a whole number >= 1; got '1e3'"),
    (["report", "in.csv", "--batch-size", "2.5"], "argument --batch-size: must be a whole number >= 1; got '2.5'"),
    (["report", "in.csv", "--n-boot", "-1"], "argument --n-boot: must be a whole number >= 0; got '-1'"),
    (["report", "in.csv", "--n-boot", "many"], "argument --n-boot: must be a whole number >= 0; got 'many'"),
    (["gate", "in.csv", "--policy", "p.json", "--batch-size", "0"],
     "argument --batch-size: must be a whole number >= 1; got '0'"),
    (["gate", "in.csv", "--policy", "p.json", "--n-boot", "-3"],
     "argument --n-boot: must be a whole number >= 0; got '-3'"),
    (["judge", "in.csv", "-o", "o.csv", "--endpoint", "http://127.0.0.1:1/v1", "--judge-model", "m",
      "--concurrency", "0"], "argument --concurrency: must be a whole number >= 1; got '0'"),
    (["judge", "in.csv", "-o", "o.csv", "--endpoint", "http://127.0.0.1:1/v1", "--judge-model", "m",
      "--max-rows", "0"], "argument --max-rows: must be a whole number >= 1; got '0'"),
    (["judge", "in.csv", "-o", "o.csv", "--endpoint", "http://127.0.0.1:1/v1", "--judge-model", "m",
      "--k", "-1"], "argument --k: must be a whole number >= 1; got '-1'"),
])
def test_counts_below_their_minimum_or_not_whole_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", [["compute", "--q", "q", "--c", "c", "--r", "r"],
                                     ["score", "in.csv", "-o", "o.csv"],
                                     ["report", "in.csv"], ["gate", "in.csv", "--policy", "p.json"]])
def test_every_command_that_loads_a_model_takes_the_device_precision_and_trust_options(command, capsys):
    args = build_parser().parse_args([*command, "--device", "cpu", "--precision", "bf16", "--trust-model-code"])
    assert (args.device, args.precision, args.trust_model_code) == ("cpu", "bf16", True)
    defaults = build_parser().parse_args(command)
    assert (defaults.precision, defaults.trust_model_code) == ("fp32", False)
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([*command, "--precision", "fp8"])
    assert exit_info.value.code == 2
    assert "argument --precision: invalid choice: 'fp8'" in capsys.readouterr().err


def test_counts_at_their_minimum_are_accepted():
    score = build_parser().parse_args(["score", "in.csv", "-o", "out.csv", "--batch-size", "1", "--chunk-rows", "1"])
    assert (score.batch_size, score.chunk_rows) == (1, 1)
    report = build_parser().parse_args(["report", "in.csv", "--n-boot", "0", "--batch-size", " 7 "])
    assert (report.n_boot, report.batch_size) == (0, 7)


@pytest.mark.parametrize("output, message", [
    ("scored.xlsx", r"cannot write '\.xlsx' files"),
    ("folder.csv", "the output is a folder, not a file"),
])
def test_score_checks_the_output_before_the_input_and_the_model(tmp_path, output, message):
    (tmp_path / "folder.csv").mkdir()
    # The input does not exist and the model is not registered: either would be the error if checked first.
    args = build_parser().parse_args(["score", str(tmp_path / "absent.csv"), "-o", str(tmp_path / output),
                                      "--model", "no-such-model"])
    with pytest.raises(SGIInputError, match=message):
        cmd_score(args)
    args.output = tmp_path / "scored.csv"
    with pytest.raises(SGIInputError, match="file not found"):
        cmd_score(args)


def test_a_bad_output_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys):
    source = tmp_path / "in.csv"
    source.write_text("question,context,response\nq,c,r\n")
    assert main(["score", str(source), "-o", str(tmp_path / "out.json"), "--model", "hashing"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write '.json' files") and err.count("\n") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["in.csv"]  # no output, no embedding cache opened


def test_every_subcommand_is_assembled_once_and_says_what_it_does():
    group = build_parser()._subparsers._group_actions[0]
    assert set(group.choices) == {"compute", "score", "report", "models", "convert", "gate", "judge", "compare",
                                  "monitor", "sample", "pull", "annotate"}
    assert [module.__name__.rpartition(".")[2] for module in cli.COMMANDS] == list(group.choices)
    helps = {action.dest: action.help for action in group._choices_actions}
    assert set(helps) == set(group.choices) and all(len(text) > 20 for text in helps.values())
    assert "``score``" not in cli.__doc__  # described in one place: its own --help
