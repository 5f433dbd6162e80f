"""What chapter 4's scores allow: a 95% interval on every entity F1 (test sentences resampled), and the
comparisons the tab states, each from `backend.runtime.stats.claim`:

- `transfer`: the German-only model on each other language against German itself. Different test sets: the
  difference mixes what transfers with how hard each language's sentences are, so even a claimed difference
  says "on these test sets" (the book's fair reference, each language's own fine-tuned model, is not built here);
- `joint`: the all-languages model against the German-only one on the same language: the same sentences,
  resampled together (a paired bootstrap);
- `unseen`: a single run (a learner's own) on the languages it never saw against the ones it trained on.
"""

from __future__ import annotations

from backend.runtime import stats


def _estimate(name: str, counts) -> stats.Estimate:
    return stats.entity_f1(counts, name)


def _claim(a: stats.Estimate, a_counts, b: stats.Estimate, b_counts, paired: bool, what: str) -> dict:
    diff = stats.f1_difference(a_counts, b_counts, paired=paired)
    return stats.claim(a, b, diff, what=what, units="test sentences", better_word="higher").as_dict()


def of_runs(raw: dict, counts: dict | None, names: dict) -> dict:
    """{"ci95": run -> language -> [lo, hi], "transfer": language -> claim, "joint": language -> claim,
    "unseen": claim or None, "sentences": language -> test sentences}; empty intervals when `counts` is None
    (a default run built before per-sentence counts were kept and not scored since)."""
    langs = raw["languages"]
    if counts is None:
        return {"ci95": {}, "transfer": {}, "joint": {}, "unseen": None, "sentences": {}}
    est = {run: {l: _estimate(f"{names.get(run, run)} on {l}", counts[run][l]) for l in langs} for run in raw["runs"]}
    out = {"ci95": {run: {l: [round(e.lo, 4), round(e.hi, 4)] for l, e in by.items()} for run, by in est.items()},
           "sentences": {l: len(next(iter(counts.values()))[l]) for l in langs}, "transfer": {}, "joint": {},
           "unseen": None}
    if "de" in est:
        de = est["de"]
        for l in langs:
            if l != "de":
                out["transfer"][l] = _claim(de[l], counts["de"][l], de["de"], counts["de"]["de"], False,
                                            f"F1 difference {l} - de of the German-only model (different test sets)")
        if "all" in est:
            for l in langs:
                out["joint"][l] = _claim(est["all"][l], counts["all"][l], de[l], counts["de"][l], True,
                                         f"F1 difference all languages - German only on {l} (the same sentences)")
    if len(est) == 1:
        out["unseen"] = _unseen(raw, counts)
    return out


def _unseen(raw: dict, counts: dict) -> dict | None:
    """One run: its F1 on the languages it never saw against the ones it trained on (sentences pooled)."""
    run = next(iter(raw["runs"]))
    trained = raw["runs"][run]["meta"]["train_languages"]
    unseen = [l for l in raw["languages"] if l not in trained]
    if not unseen or not trained:
        return None
    a = [c for l in unseen for c in counts[run][l]]
    b = [c for l in trained for c in counts[run][l]]
    out = _claim(_estimate("the languages it never saw", a), a, _estimate("the ones it trained on", b), b, False,
                 "F1 difference never seen - trained on (different test sets)")
    return {**out, "unseen_f1": round(float(stats.entity_f1(a).value), 4),
            "trained_f1": round(float(stats.entity_f1(b).value), 4)}
