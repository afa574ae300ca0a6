import io

import pytest

from sgi_core.progress import EmbeddingProgress


class FakeClock:
    """Returns the times it is given, one per call."""

    def __init__(self, *times):
        self.times = list(times)

    def __call__(self):
        return self.times.pop(0)


class Terminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self):
        return True


def test_rate_and_time_left_in_a_log():
    # Made at t=0. 320 texts after 10 s: 32 texts/s, (1024 - 320) / 32 = 22 s left.
    # 640 at t=15 is under 10 s after the last line: not written. 1024 at t=32: the last line.
    out = io.StringIO()
    progress = EmbeddingProgress("minilm", stream=out, clock=FakeClock(0.0, 10.0, 15.0, 32.0))
    for done in (320, 640, 1024):
        progress(done, 1024)
    assert out.getvalue().splitlines() == [
        "minilm:  31% 320/1024 texts embedded [00:10<00:22, 32.00 texts/s]",
        "minilm: 100% 1024/1024 texts embedded [00:32<00:00, 32.00 texts/s]",
    ]


def test_time_left_over_a_minute_and_slow_rates():
    # 64 texts in 40 s: 1.60 texts/s; 11,936 texts left take 7,460 s = 2:04:20.
    line = EmbeddingProgress("e5").line(64, 12_000, 40.0)
    assert line == "e5:   1% 64/12000 texts embedded [00:40<2:04:20,  1.60 texts/s]"  # tqdm pads rates to 5 characters


def test_no_rate_before_time_has_passed():
    assert EmbeddingProgress("minilm").line(0, 10, 0.0).endswith("[00:00<?, ? texts/s]")


def test_every_call_written_when_the_interval_is_zero():
    out = io.StringIO()
    progress = EmbeddingProgress("m", stream=out, clock=FakeClock(0.0, 1.0, 2.0), min_interval=0.0)
    progress(1, 4)
    progress(2, 4)
    assert [line.split(" texts embedded")[0] for line in out.getvalue().splitlines()] == ["m:  25% 1/4", "m:  50% 2/4"]


def test_everything_cached_writes_nothing():
    out = io.StringIO()
    EmbeddingProgress("minilm", stream=out, clock=FakeClock(0.0, 1.0))(0, 0)
    assert out.getvalue() == ""


def test_each_chunk_is_timed_from_the_end_of_the_previous_one():
    # Chunk 1: 100 texts in 4 s (25/s). Chunk 2 starts at t=4 and has 30 texts done at t=7: 10/s,
    # not 130 / 7 as a clock that never restarted would say.
    out = io.StringIO()
    progress = EmbeddingProgress("m", stream=out, clock=FakeClock(0.0, 4.0, 7.0), min_interval=0.0)
    progress(100, 100)
    progress(30, 60)
    assert out.getvalue().splitlines() == [
        "m: 100% 100/100 texts embedded [00:04<00:00, 25.00 texts/s]",
        "m:  50% 30/60 texts embedded [00:03<00:03, 10.00 texts/s]",
    ]


def test_terminal_redraws_one_line_in_place_with_a_bar():
    out = Terminal()
    progress = EmbeddingProgress("minilm", stream=out, clock=FakeClock(0.0, 0.2, 1.0, 2.0))
    progress(10, 40)  # t=0.2: the first line
    progress(20, 40)  # t=1.0: 0.8 s later, over the 0.5 s of a terminal
    progress(40, 40)  # t=2.0: the last line ends the run with a newline
    text = out.getvalue()
    assert text.count("\r") == 3 and text.count("\n") == 1 and text.endswith("\n")
    frames = text.rstrip("\n").split("\r")[1:]
    assert frames[0] == "minilm:  25%|██▌       | 10/40 texts embedded [00:00<00:00, 50.00 texts/s]"
    assert frames[-1] == "minilm: 100%|██████████| 40/40 texts embedded [00:02<00:00, 20.00 texts/s]"


def test_terminal_pads_over_a_longer_previous_frame():
    out = Terminal()
    progress = EmbeddingProgress("m", stream=out, clock=FakeClock(0.0, 100.0, 101.0), min_interval=0.0)
    progress(1, 1000)  # 0.01 texts/s, 27:45:00 left: a long frame
    progress(1000, 1000)
    first, last = out.getvalue().rstrip("\n").split("\r")[1:]
    assert len(last) == len(first) and last.rstrip().endswith("texts/s]")
    assert len(last.rstrip()) < len(first)


@pytest.mark.parametrize("encoding, bar", [("utf-8", "|█████     |"), ("ascii", "|#####     |")])
def test_bar_falls_back_to_ascii(encoding, bar):
    class Stream(Terminal):
        pass

    Stream.encoding = encoding
    out = Stream()
    EmbeddingProgress("m", stream=out, clock=FakeClock(0.0, 1.0))(5, 10)
    assert bar in out.getvalue()


def test_defaults_to_the_current_stderr(capsys):
    EmbeddingProgress("m", clock=FakeClock(0.0, 2.0))(4, 4)
    assert capsys.readouterr().err == "m: 100% 4/4 texts embedded [00:02<00:00,  2.00 texts/s]\n"
