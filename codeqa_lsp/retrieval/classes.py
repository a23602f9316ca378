"""Class- and module-level evidence: a skeleton that matches the question lifts its members
and gives way to them.

A class chunk is a skeleton (its docstring, fields and every method's signature), so it
gathers the vocabulary of all its methods and often matches a question best: "why isn't the
file created until the first write" finds click's `File` class first, with its docstring about
lazy files. But the skeleton holds no behaviour: the answer is in one of its methods,
which matched less well on its own because each method has only part of the class's words.
A module chunk is the same for a file (its docstring, imports and top-level statements)
and its top-level functions. So each method of a class, and each top-level function of a
module, among the first `WITHIN` results gains `OWNER_WEIGHT` × the owner's score: among
similar candidates, the members of the class or file the question is about come first.

The owner then gives way to its members: among the first `WITHIN` it keeps `OWNER_SHARE` of
its score (its members are lifted by its whole score). A skeleton lists what its methods do;
a method does it. Before, a strong class took a top place *and* lifted its methods into the
next ones (semver's `Version` struct second under `Version.parse` for "where are leading
zeros rejected while reading the major, minor and patch numbers", gin's `Engine` second for
"how are '..' segments eliminated from a request URL"). Measured 2026-11-27 (local, same
session, baseline 1.0): the 100 questions hybrid hit@5 / MRR@10 (local; hash with its
low-overlap hit@5), the tryout, and the top-5 hits of 1,016 probes written blind in eight
user passes over 110 repositories no set holds (811 before):

  share, owners         100q local     100q hash             tryout        probes top 5
  1.0 (before)          0.87 / 0.740   0.77 / 0.630 / 0.70   0.83 / 0.658  811
  0.85, classes         0.87 / 0.743   0.77 / 0.635 / 0.70   0.82 / 0.668  819
  0.75, classes         0.87 / 0.742   0.77 / 0.640 / 0.70   0.82 / 0.668  824
  0.6, classes          0.87 / 0.742   0.76 / 0.641 / 0.68   0.82 / 0.668  825
  0.85, both            0.87 / 0.743   0.78 / 0.635 / 0.71   0.82 / 0.677  820
  0.75, both (chosen)   0.87 / 0.742   0.78 / 0.641 / 0.71   0.82 / 0.680  825
  0.6, both             0.87 / 0.742   0.77 / 0.641 / 0.70   0.82 / 0.681  826
  0.85, classes with a member among the candidates only
                        0.87 / 0.743   0.77 / 0.630 / 0.70   0.83 / 0.663  811

What it costs: a question whose answer is the class itself (requests-20 wants
`CaseInsensitiveDict` or its `__setitem__`: the class 1st -> 4th; the tryout's MediatR
"what runs before the main handler of a command" wants the `RequestPreProcessorBehavior`
class, 5th -> out of the first ten; a few callable classes of the user passes, tenacity's
`stop_after_attempt`). CoSQA (no classes or modules among its functions) and SWE-bench (long
queries skip this step) are unchanged; confidence and off-topic answers are unchanged.

Measured on the 100 questions (hybrid hit@5 / MRR@10, 2026-11-23):
  classes only, weight 0 → 0.1 / 0.25 / 0.4:
    local: 0.78/0.606 → 0.80/0.623 / 0.81/0.629 / 0.80/0.631 (requests 0.88 → 0.92, click
           0.76 → 0.80, rxjs 0.64 → 0.68 at 0.25; express unchanged: its "classes" are
           constructor functions with prototype methods, not class chunks);
    hash:  0.76/0.592 → 0.76/0.599 / 0.77/0.605 / 0.78/0.614.
  then modules too (with the enclosing-function step by position), 0 → 0.12 / 0.25:
    local: 0.82/0.635 → 0.83/0.646 / 0.84/0.643 (requests 0.92 → 0.96, click 0.80 → 0.84);
    hash:  0.77/0.605 → 0.76/0.613 / 0.76/0.617 (requests-09 from rank 5 to 7; click MRR
           0.58 → 0.62, rxjs 0.56 → 0.58).
One weight for both kinds of owner: 0.25, the best local result (the default embedder).

Not for a pasted line of output that some candidate writes: that code is the answer, and a
class matching the line's words is not about it. moshi's `Platform class java.util.Date
requires explicit JsonAdapter to be registered` put the date adapter class second, and its
two methods went over `ClassJsonAdapter.create`, which throws the message (1st -> 4th).
A question quoting a message keeps the lift (rxjs-17 asks where 'No timeout provided.' is
thrown and how `timeout` switches to a fallback: without the lift 1st -> 3rd). Measured
2026-11-27: the 100 questions (local and hash) and the tryout rank identically.

A Go type's methods are its members in whichever file of its package (folder) they are
declared: viper's `Viper` struct is in viper.go and `searchInPath` in file.go, so "which file
extensions are tried when looking for the configuration file inside each search directory"
lifted viper.go's setters over it (18th; 5th with the package's files). Measured 2026-11-27
(local): the 100 questions and five probe sets of earlier user passes rank identically
except urfave/cli's `Command.parseFlags` 19 -> 7 and gorilla/mux's `Use` 3 -> 2; in the
tryout cobra's `ValidateRequiredFlags` 5 -> 6 (a tie with `IsAdditionalHelpTopicCommand`,
both lifted by the `Command` struct). Other languages keep a class's members in its file.
"""

from __future__ import annotations

from collections.abc import Sequence

from codeqa_lsp.chunking.model import Chunk

OWNER_WEIGHT = 0.25
WITHIN = 10
# What a class or module chunk among the first WITHIN keeps of its score (module docstring).
OWNER_SHARE = 0.75


def members_of_strong_owners(
    ranked: Sequence[tuple[Chunk, float]],
    weight: float = OWNER_WEIGHT,
    within: int = WITHIN,
    writers: frozenset[str] = frozenset(),
    owner_share: float = OWNER_SHARE,
) -> list[tuple[Chunk, float]]:
    """`ranked` (best first) with each method of a class, and each top-level function of a
    module, whose class or module chunk is in the first `within` results raised by `weight`
    × that chunk's score, and those class and module chunks lowered to `owner_share` of
    their scores; re-sorted (stable). `writers`: ids of the code writing a line of output the
    query pastes; when one is among the first `within`, nothing changes (see the module
    docstring)."""
    if writers and any(chunk.id in writers for chunk, _ in ranked[:within]):
        return list(ranked)
    classes: dict[tuple[str, str], float] = {}
    modules: dict[str, float] = {}
    for chunk, score in ranked[:within]:
        if chunk.kind == "class":
            key = (type_home(chunk), chunk.symbol)
            classes[key] = max(classes.get(key, score), score)
        elif chunk.kind == "module":
            modules[chunk.path] = max(modules.get(chunk.path, score), score)
    if (not classes and not modules) or weight <= 0:
        return list(ranked)
    lifted = []
    for place, (chunk, score) in enumerate(ranked):
        owner = 0.0
        if chunk.kind == "method" and "." in chunk.symbol:
            owner = classes.get((type_home(chunk), chunk.symbol.rsplit(".", 1)[0]), 0.0)
        elif chunk.kind == "function" and "." not in chunk.symbol:
            owner = modules.get(chunk.path, 0.0)
        elif place < within and chunk.kind in ("class", "module") and score > 0:
            score *= owner_share  # the owner gives way to its members
        lifted.append((chunk, score + weight * max(owner, 0.0)))
    order = sorted(range(len(lifted)), key=lambda i: -lifted[i][1])
    return [lifted[i] for i in order]


def type_home(chunk: Chunk) -> str:
    """Where a type's methods live: its file, or in Go its package's folder."""
    if chunk.language == "go":
        return chunk.path.rsplit("/", 1)[0] if "/" in chunk.path else ""
    return chunk.path
