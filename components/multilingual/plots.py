"""The transfer plot: entity F1 per test language, one bar per training run, with a "What to notice"
line read off its own data."""

from __future__ import annotations

import plotly.graph_objects as go

from components.shell import notice
from components.shell.figures import legend_below

RUN_COLORS = {"de": "#1f77b4", "all": "#ff7f0e", "yours": "#2ca02c"}


def ci(r: dict, run: str, lang: str) -> list[float] | None:
    """The 95% interval of `run`'s entity F1 on `lang` (None when the run has no per-sentence counts)."""
    return ((r.get("evidence") or {}).get("ci95") or {}).get(run, {}).get(lang)


def with_ci(r: dict, row: dict, lang: str, digits: int = 2) -> str:
    """A score with its 95% interval: "0.61 (0.50-0.71)"."""
    c = ci(r, row["run"], lang)
    return f"{row[lang]:.{digits}f}" + (f" ({c[0]:.{digits}f}-{c[1]:.{digits}f})" if c else "")


def _allowed(r: dict, claims: dict, langs: list[str], higher: str, lower: str) -> str:
    """What the claims on `langs` allow: the claimed ones, and for the rest the reason the rule gave."""
    names = r["languages"]
    claimed = [l for l in langs if claims[l]["claimed"]]
    said = []
    for l in claimed:
        c = claims[l]
        said.append(f"{names[l]} {higher if c['change'] > 0 else lower} (difference {c['change']:+.2f}, 95% interval "
                    f"{c['lo']:+.2f} to {c['hi']:+.2f})")
    rest = [l for l in langs if not claims[l]["claimed"]]
    if rest:
        reasons = sorted({claims[l]["reason"] for l in rest})
        why = ("the 95% interval of each difference includes zero" if reasons == ["overlap"]
               else "; ".join(claims[l]["why"] for l in rest))
        said.append(f"no difference is claimed for {', '.join(names[l] for l in rest)} ({why})")
    return "; ".join(said)


def transfer_notice(r: dict) -> str:
    """The German model on every language with its interval, and what the intervals allow (`evidence`, from
    backend.runtime.stats.claim): a zero-shot language is said to score above or below German only where the
    rule claims it, and then on these test sets (each language has its own sentences)."""
    rows = {row["run"]: row for row in r["table"]}
    langs = [l for l in r["languages"] if l != "de"]
    de, every = rows.get("de"), rows.get("all")
    if de is None and len(rows) == 1:
        return _one_run_notice(r, next(iter(rows.values())))
    if de is None or not langs:
        return ""
    ev = r.get("evidence") or {}
    names = r["languages"]
    said = ("Trained on German only, entity F1 (95% interval) is " + with_ci(r, de, "de") + " on German; zero-shot "
            + ", ".join(f"{names[l]} {with_ci(r, de, l)}" for l in langs) + ".")
    if not ev.get("transfer"):
        return said + " (No intervals: this run was built before per-sentence counts were kept; run the set-up.)"
    n = ev["sentences"].get("de")
    said += (" Against German: " + _allowed(r, ev["transfer"], langs, "above German", "below German") +
             f". Each language has its own {n} test sentences, so a gap also measures how hard each set is; the "
             "fair reference, each language's own fine-tuned model on its own test set, is not built here.")
    if every is not None and ev.get("joint"):
        said += (" Training on all four languages, against German only on the same sentences: "
                 + _allowed(r, ev["joint"], list(names), "scores higher", "scores lower") + ".")
    return said


def _one_run_notice(r: dict, row: dict) -> str:
    """A single run (a learner's own): its best and worst test language with intervals, and whether the
    languages it never saw score below the ones it trained on, as far as the rule allows."""
    names, trained = r["languages"], row.get("train_languages") or []
    best = max(names, key=lambda l: row[l])
    worst = min(names, key=lambda l: row[l])
    if f"{row[best]:.2f}" == f"{row[worst]:.2f}":
        return f"Your run scores the same entity F1 on every test language ({row[best]:.2f})."
    said = (f"Your run scores highest on {names[best]}, {with_ci(r, row, best)}, and lowest on {names[worst]}, "
            f"{with_ci(r, row, worst)} (95% intervals in brackets)")
    c = (r.get("evidence") or {}).get("unseen")
    if c:
        verdict = ("so the intervals allow the claim that " + ("the unseen languages score higher" if c["change"] > 0
                   else "transfer loses F1") if c["claimed"] else f"no difference is claimed: {c['why']}")
        said += (f". On the languages it never saw (zero-shot): {c['unseen_f1']:.2f} against {c['trained_f1']:.2f} on "
                 f"the ones it trained on, a difference of {c['change']:+.2f} (95% interval {c['lo']:+.2f} to "
                 f"{c['hi']:+.2f}): {verdict}")
    return said + "."


def transfer_bars(r: dict) -> go.Figure:
    fig = go.Figure()
    langs = list(r["languages"])
    for row in r["table"]:
        cis = [ci(r, row["run"], l) or [row[l], row[l]] for l in langs]
        fig.add_trace(go.Bar(x=[r["languages"][l] for l in langs], y=[row[l] for l in langs], name=row["trained_on"],
                             marker_color=RUN_COLORS.get(row["run"]), text=[f"{row[l]:.2f}" for l in langs],
                             textposition="inside", insidetextanchor="start", cliponaxis=False,  # at the foot: the error bar is on top
                             error_y=dict(type="data", symmetric=False, visible=True,
                                          array=[c[1] - row[l] for c, l in zip(cis, langs)],
                                          arrayminus=[row[l] - c[0] for c, l in zip(cis, langs)]),
                             customdata=cis, hovertemplate="%{x}: F1 %{y:.3f}<br>95% interval "
                             "%{customdata[0]:.3f}-%{customdata[1]:.3f}<extra>" + row["trained_on"] + "</extra>"))
    fig.update_layout(title="Entity F1 by test language (bars: 95% interval, test sentences resampled)", barmode="group", height=380, template="plotly_white",
                      yaxis=dict(title="entity F1 (test)", range=[0, 1.05]), xaxis_title="test language",
                      margin=dict(l=60, r=20, t=60, b=20))
    legend_below(fig, "fine-tuned on")
    return notice(fig, transfer_notice(r))
