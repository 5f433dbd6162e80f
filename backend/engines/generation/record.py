"""Taps that ride inside `model.generate` and keep only what the playground shows.

`generate(output_scores=True)` keeps one full-vocabulary tensor per step (49k floats for
SmolLM2): 512 steps x 16 beams is 1.6 GB. These taps are logits processors that return the
scores unchanged and keep, per step, the top-N candidates, a few scalars, and one rolling
full-vocabulary tensor from the previous step (needed to score the token chosen there, which
`generate` only reveals on the next call). Memory therefore stays flat as length grows, and
everything stays on the model's device until `finalize` (no host sync per step).
"""

from __future__ import annotations

import torch
from transformers import LogitsProcessor


class Tap(LogitsProcessor):
    """A processor that shows the scores to a recorder at one point of the chain, unchanged."""

    def __init__(self, recorder: "StepRecorder | BeamRecorder", stage: str):
        self.recorder = recorder
        self.stage = stage

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if scores.device.type != "cpu":
            self.recorder.observe(self.stage, input_ids, scores)
            return scores
        # On CPU, one thread: these are single passes over ~50k floats, where intra-op threads
        # only add barrier waits (measured: 2.7 ms vs 55 ms per step on a busy 2-core box).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            self.recorder.observe(self.stage, input_ids, scores)
        finally:
            torch.set_num_threads(threads)
        return scores


def _nbytes(obj) -> int:
    """Bytes held by the tensors in a recorder's lists and dicts."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(_nbytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(v) for v in obj)
    if hasattr(obj, "__dict__"):
        return sum(_nbytes(v) for v in vars(obj).values())
    return 0


class StepRecorder:
    """Per-step record for greedy and sampling (one row per returned sequence).

    Stages: `raw` (the model's own distribution, first in the chain), `temp` (after penalties
    and temperature, before top-k/top-p; sampling only), `final` (what the token is chosen
    from: after the top-k/top-p cut, or after penalties). A stage whose tap is absent (no
    processor between it and the previous one) reuses the previous stage's numbers.

    Cost per step is a handful of passes over the vocabulary (logsumexp, top-k, one exp, one
    dot product), a few per cent of a 135M model's decode step. The processors transformers
    ships are out of place, so keeping a reference to the previous step's scores is safe and
    costs no copy.
    """

    def __init__(self, top_n: int, sampling: bool):
        self.top_n = top_n
        self.sampling = sampling
        self.calls = 0
        self.cand_ids: list[torch.Tensor] = []  # [B, N] per step, top-N by raw probability
        self.cand_raw: list[torch.Tensor] = []  # [B, N] raw log-probs
        self.cand_temp: list[torch.Tensor] = []  # [B, N] log-probs after temperature
        self.cand_final: list[torch.Tensor] = []  # [B, N] log-probs after the cut
        self.entropy_raw: list[torch.Tensor] = []
        self.entropy_temp: list[torch.Tensor] = []
        self.survivors: list[torch.Tensor] = []  # [B] tokens with non-zero final probability
        self.chosen: list[torch.Tensor] = []  # [B, 5]: id, raw logp, rank, temp logp, final logp
        self._prev: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}  # stage -> (scores, logsumexp)

    @staticmethod
    def _lse_entropy(scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """logsumexp [B, 1] and entropy [B] of softmax(scores); scores must be finite."""
        lse = torch.logsumexp(scores, dim=-1, keepdim=True)
        p = torch.exp(scores - lse)
        return lse, lse[:, 0] - (p * scores).sum(-1)

    def observe(self, stage: str, input_ids: torch.Tensor, scores: torch.Tensor) -> None:
        if stage == "raw":
            if self.calls > 0:
                self._resolve(input_ids[:, -1])
            self.calls += 1
            scores = scores.float()
            lse, ent = self._lse_entropy(scores)
            vals, ids = scores.topk(min(self.top_n, scores.shape[-1]), dim=-1)
            self.cand_ids.append(ids)
            self.cand_raw.append(vals - lse)
            self.entropy_raw.append(ent)
            self._prev = {"raw": (scores, lse)}
        elif stage == "temp":
            scores = scores.float()
            lse, ent = self._lse_entropy(scores)
            self.cand_temp.append(scores.gather(-1, self.cand_ids[-1]) - lse)
            self.entropy_temp.append(ent)
            self._prev["temp"] = (scores, lse)
        elif stage == "final":
            scores = scores.float()
            lse = torch.logsumexp(scores, dim=-1, keepdim=True)
            self.cand_final.append(scores.gather(-1, self.cand_ids[-1]) - lse)
            self.survivors.append((scores > float("-inf")).sum(-1))
            self._prev["final"] = (scores, lse)

    def _resolve(self, token: torch.Tensor) -> None:
        """Score the token chosen at the previous step, now that generate has appended it."""
        tok = token.long()[:, None]
        raw, lse = self._prev["raw"]
        logit = raw.gather(-1, tok)
        rank = (raw > logit).sum(-1, keepdim=True).float() + 1
        out = [tok.float(), logit - lse, rank]
        for stage in ("temp", "final"):
            if stage in self._prev:
                sc, ls = self._prev[stage]
                out.append(sc.gather(-1, tok) - ls)
            else:  # no tap there: same distribution as the stage before
                out.append(out[1] if stage == "temp" else out[-1])
        self.chosen.append(torch.cat(out, dim=-1))

    def nbytes(self) -> int:
        """Device memory the record holds now (per-step data plus the rolling last step)."""
        return _nbytes(self)

    def finalize(self, sequences: torch.Tensor, prompt_len: int) -> dict:
        """Move the record to the host as plain lists, one entry per generated step.

        `sequences` is what generate returned; the token of the last step is scored here. A
        step generate undid (deferred stop checks on CUDA) is dropped by the caller's lengths.
        """
        n_gen = sequences.shape[1] - prompt_len
        if len(self.chosen) < n_gen and self._prev:
            self._resolve(sequences[:, prompt_len + len(self.chosen)])
        self.peak_bytes = self.nbytes()
        self._prev = {}
        steps = min(n_gen, len(self.chosen))
        out: dict = {"steps": steps}
        if steps == 0:
            return out

        def stack(xs: list[torch.Tensor], fallback: list[torch.Tensor] | None = None) -> list | None:
            xs = xs or fallback or []
            return torch.stack(xs[:steps], dim=1).cpu().tolist() if xs else None  # [B, steps, ...]

        out["cand_ids"] = stack(self.cand_ids)
        out["cand_raw"] = stack(self.cand_raw)
        out["cand_temp"] = stack(self.cand_temp, self.cand_raw)
        out["cand_final"] = stack(self.cand_final, self.cand_temp or self.cand_raw)
        out["entropy_raw"] = stack(self.entropy_raw)
        out["entropy_temp"] = stack(self.entropy_temp, self.entropy_raw)
        survivors = self.survivors or [torch.full_like(e, float("nan")) for e in self.entropy_raw]
        out["survivors"] = stack(survivors)
        out["chosen"] = stack(self.chosen)
        return out


class BeamRecorder:
    """The beam tree: at each step, each live beam's top candidates and which ones were kept.

    Beam search hands the processors log-softmax scores of the running beams (rows of
    `input_ids`). Which beam a new row descends from is found by matching its prefix against
    the previous step's rows. Cumulative log-probs are sums of the model's raw token log-probs
    (the book's sequence score), tracked per running beam. Recording stops after `max_steps`
    steps so the tree stays drawable.
    """

    def __init__(self, num_beams: int, per_beam: int, max_steps: int):
        self.num_beams = num_beams
        self.per_beam = per_beam
        self.max_steps = max_steps
        self.calls = 0
        self.parents: list[torch.Tensor] = []  # [nb] per step >= 1: row index at step-1
        self.tokens: list[torch.Tensor] = []  # [nb] per step >= 1: token appended
        self.cum: list[torch.Tensor] = []  # [nb] per step: cumulative raw log-prob of each row
        self.cand_ids: list[torch.Tensor] = []  # [nb, c]
        self.cand_logp: list[torch.Tensor] = []  # [nb, c]
        self._prev_ids: torch.Tensor | None = None
        self._prev_logp: torch.Tensor | None = None

    def observe(self, stage: str, input_ids: torch.Tensor, scores: torch.Tensor) -> None:
        if stage != "raw" or self.calls > self.max_steps:
            return
        logp = scores.float()  # beam search already applied log_softmax
        if self.calls == 0:
            cum = torch.full((input_ids.shape[0],), -1e9, device=scores.device)
            cum[0] = 0.0  # generate starts with one live beam; the others are copies at -1e9
        else:
            prev = self._prev_ids
            match = (input_ids[:, None, :-1] == prev[None, :, :]).all(-1)  # [new, old]
            parent = match.float().argmax(-1)
            token = input_ids[:, -1]
            cum = self.cum[-1][parent] + self._prev_logp[parent, token]
            self.parents.append(parent)
            self.tokens.append(token)
        self.cum.append(cum)
        self.calls += 1
        if self.calls > self.max_steps:
            self._prev_ids = self._prev_logp = None
            return
        vals, ids = logp.topk(min(self.per_beam, logp.shape[-1]), dim=-1)
        self.cand_ids.append(ids)
        self.cand_logp.append(vals)
        self._prev_ids = input_ids
        self._prev_logp = logp

    def nbytes(self) -> int:
        return _nbytes(self)

    def finalize(self) -> dict:
        self.peak_bytes = self.nbytes()
        self._prev_ids = self._prev_logp = None

        def host(xs: list[torch.Tensor]) -> list:
            return [x.cpu().tolist() for x in xs]

        return {
            "parents": host(self.parents),
            "tokens": host(self.tokens),
            "cum": host(self.cum),
            "cand_ids": host(self.cand_ids),
            "cand_logp": host(self.cand_logp),
            "truncated": self.calls > self.max_steps,
        }
