"""A process group's ending: a collective (an all-reduce, a broadcast) that timed out or failed, after which the
process takes itself down. The kind, as PyTorch's distributed backends print it (facts about their output, read
2026-12-07):

- NCCL's watchdog on a collective past its timeout: ``[Rank 1] Watchdog caught collective operation timeout:
  WorkNCCL(SeqNum=395, OpType=ALLREDUCE, ...) ran for 600083 milliseconds before timing out.`` (hiyouga/LlamaFactory
  issue 7396, 2025-03-21; XPixelGroup/BasicSR issue 737, 2025-06-26), the same as the exception its thread ends with
  (``NCCL watchdog thread terminated with exception: ...``, ``Process group watchdog thread terminated with
  exception: ...``: arrival-ltd/catalyst-rl-tutorial issue 15; mila-iqia/milabench PR 269, 2024-09-09);
- what ProcessGroupNCCL says next, before it aborts: ``Some NCCL operations have failed or timed out. Due to the
  asynchronous nature of CUDA kernels, ...`` and ``To avoid data inconsistency, we are taking the entire process
  down.`` (PyTorch 2.x, ``ProcessGroupNCCL.cpp``);
- its heartbeat monitor on a watchdog that is itself stuck: ``Heartbeat monitor timed out! Process will be
  terminated after dumping debug info.`` and ``ProcessGroupNCCL's watchdog got stuck for 600 seconds without making
  progress ...`` (hiyouga/LlamaFactory issue 6953, 2025-02-16);
- NCCL's own errors (``NCCL error``, ``ncclInternalError``, ``ncclSystemError``, ...) and c10d's
  ``DistBackendError`` that carries them;
- Gloo's timeout on a peer that never sends: ``Timed out waiting 1800000ms for recv operation to complete``
  (pytorch/gloo ``gloo/transport/tcp/unbound_buffer.cc``).

Every one of them is recoverable (an elastic restart goes on stepping: a step record after it undoes it), and the
most telling is the first: the watchdog's line names the collective and its timeout; the words that the process is
going down say less, and the note that operations "have failed or timed out" least.

The words are matched as the backends print them, with what follows or comes before (``NCCL error in: <file>``,
``NCCL Error 2: unhandled system error``, ``To avoid data inconsistency, we are ...``): a tip or a FAQ at the end of
a log that names them in passing (``an NCCL error usually means a network fault``) is no ending.

Never this kind: a line that states a timeout setting (``NCCL INFO NCCL_IB_TIMEOUT set by environment to 22``,
``Timeout(ms)=600000`` alone), NCCL's INFO and WARN lines (``NCCL WARN Call to connect returned Connection refused,
retrying``: NCCL retries).
"""

from __future__ import annotations

from typing import Final, NamedTuple


class CollectiveEnding(NamedTuple):
    """One wording of the kind: ``pattern`` (a regex searched in a message) and ``rank`` (how telling its line is
    as the run's cause, as :class:`tierscope.collector.formats.status.Marker` ranks them: higher wins within a
    block of lines)."""

    pattern: str
    rank: int


#: The wordings of a process group's ending, most telling first.
COLLECTIVE_ENDINGS: Final[tuple[CollectiveEnding, ...]] = (
    CollectiveEnding(
        r"Watchdog caught collective operation timeout|\bNCCL [Ee]rror(?: in:| \d+:|:)|\bDistBackendError\b"
        r"|\bnccl(?:Internal|System|Remote|UnhandledCuda|Invalid(?:Argument|Usage))Error\b"
        r"|\bwatchdog got stuck for \d+ seconds\b|\bHeartbeat monitor timed out\b"
        r"|\bTimed out waiting \d+ms for (?:recv|send) operation to complete\b",
        4,
    ),
    CollectiveEnding(r"\bTo avoid data inconsistency, we are taking the entire process down\b", 3),
    CollectiveEnding(r"\bSome NCCL operations have failed or timed out\b", 2),
)

#: What a PyTorch C++ line opens with before the words of its cause, no part of it, each part where the envelope
#: left it: torchrun's rank tag, the c10 header (``[rank1]:[E1101 17:03:05.823968890 ProcessGroupNCCL.cpp:607] ``,
#: also without its time), the process group's own tag (``[Rank 1] ``, ``[PG 1 Rank 1] ``, ``[PG ID 0 PG GUID
#: 0(default_pg) Rank 1] ``).
C10_HEADER: Final = (
    r"^(?:\[(?:rank|default)\d+\]:\s*)?(?:\[[IWEF](?:\d{3,4} \d\d:\d\d:\d\d\.\d+)? [^\]\s]+:\d+\]\s*)?"
    r"(?:\[(?:PG [^\]]*)?Rank \d+\]\s*)?"
)
