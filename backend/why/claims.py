"""What the Why tab may conclude from its checks: each claim with the conditions under which it cannot be made.

- `scale`: the reference a token's colour is measured against: the output change the scores explain,
  |f(text) - f(baseline)|, held to at least FLOOR (a signless attention method is a share of its own total);
- `completeness`: whether integrated gradients kept their promise (passed / failed / too small to judge),
  with what would help when they did not;
- `faithfulness`: the "most faithful here" of the deletion test, or why none is named: the change to explain
  is too small, no method beats random, one token decides the test, two methods tie; integrated gradients are
  never named when their own completeness check failed or could not be made;
- `notes`: an attention sink (rollout's weight on the first token) and gradient x input contradicting
  integrated gradients (saturation), each from this input's numbers.
"""

from __future__ import annotations

import numpy as np

from backend.why import checks

FLOOR = 1e-3  # an output change below this is too small to explain (or to judge a gap in % of)
TOLERANCE = 0.05  # integrated gradients' completeness gap, as a share of the change they explain
ONE_TOKEN_SHARE = 0.8  # one removal that moves the output this much of the largest change decides the test
TIE_SHARE = 0.05  # deletion areas within this share of the winner's are a tie
SINK_SHARE = 0.5  # rollout weight on the first token that is called an attention sink
SATURATION_RHO = 0.5  # gradient x input vs integrated gradients: a Spearman below this is a contradiction
SIGNLESS = ("attention_rollout", "last_layer_attention")
NAMES = {"gradient_x_input": "gradient x input", "integrated_gradients": "integrated gradients",
         "occlusion": "occlusion", "attention_rollout": "attention rollout",
         "last_layer_attention": "last-layer attention"}


def scale(value: float, f_baseline: float, methods: list[str]) -> dict:
    """The colour reference: a signed score's strength is |score| / reference, where the reference is the
    change explained, |f(text) - f(baseline)|, or FLOOR when that is smaller; signless methods are shares."""
    change = float(value) - float(f_baseline)
    reference = max(abs(change), FLOOR)
    below = abs(change) < FLOOR
    text = (f"Colour strength = a token's |score| as a share of the change explained, f(text) - f(baseline) = "
            f"{change:+.4f}" + (f", which is below the {FLOOR:g} floor, so colours are measured against {FLOOR:g}"
                                if below else "") + "; full colour = all of it (or more).")
    signless = [m for m in methods if m in SIGNLESS]
    if signless:
        text += (f" {', '.join(NAMES[m] for m in signless)}: green, no sign (attention weights are never negative, "
                 "so they cannot say raises or lowers); strength = the token's share of that row's total.")
    return {"change": round(change, 6), "f_baseline": round(float(f_baseline), 6), "reference": round(reference, 6),
            "floor": FLOOR, "below_floor": below, "signed": [m for m in methods if m not in SIGNLESS],
            "signless": signless, "text": text}


def completeness(comp: dict, max_steps: int, suggest_contrast: bool = False) -> dict:
    """Integrated gradients' completeness: "passed" (gap under TOLERANCE of the change), "failed" (with what
    would help, or that even `max_steps` did not close it) or "too_small" (the change is under FLOOR)."""
    diff, rel, steps = abs(comp["difference"]), comp.get("relative_gap"), comp["steps"]
    if diff < FLOOR or rel is None:
        return {"status": "too_small", "text": (
            f"not judged: the change to explain, f(text) - f(baseline) = {comp['difference']:+.6f}, is below "
            f"{FLOOR:g}; a gap in % of so small a change says nothing, so integrated gradients are not claimed "
            "faithful on it."), "suggestion": None}
    if rel < TOLERANCE:
        return {"status": "passed", "text": f"passed: the gap is under {100 * TOLERANCE:.0f}% of the change explained.",
                "suggestion": None}
    first = comp.get("first_try") or {}
    trend = ""
    if first.get("steps") not in (None, steps) and first.get("relative_gap") is not None:
        trend = f" It went from {100 * first['relative_gap']:.0f}% at {first['steps']} steps to {100 * rel:.0f}% at {steps}."
    if steps >= max_steps:
        help_ = f"Even the maximum, {max_steps} steps, did not close it." + trend
    else:
        help_ = f"More steps (up to {max_steps}) may close it: this run used {steps}." + trend
    if suggest_contrast:
        help_ += (" A probability saturates along the path from the baseline (softmax flattens near 0 and 1); a logit "
                  "difference against a contrast token ('rather than') is closer to linear and usually closes the gap "
                  "with fewer steps.")
    return {"status": "failed", "text": (
        f"failed: the gap is {100 * rel:.0f}% of the change explained (over {100 * TOLERANCE:.0f}%): the integral did "
        f"not converge at {steps} steps, so integrated gradients are not claimed faithful here."), "suggestion": help_}


def faithfulness(deletion: dict, scores: dict, tokens: list[dict], explanations: list[str],
                 completeness_status: str | None) -> dict:
    """The deletion test's "most faithful here", or why no method is named (`method` None, `status` why)."""
    curves = [np.asarray(c, dtype=np.float64) for c in deletion["curves"].values()]
    curves.append(np.asarray(deletion["random_mean"], dtype=np.float64))
    moved = max(float(np.max(np.abs(c - c[0]))) for c in curves)
    withheld = {}
    if "integrated_gradients" in explanations and completeness_status != "passed":
        withheld["integrated_gradients"] = ("its completeness check failed" if completeness_status == "failed"
                                            else "its completeness check could not be made")
    out = {"method": None, "moved": round(moved, 6), "withheld": withheld, "tied": []}
    if moved < FLOOR:
        return {**out, "status": "too_small", "text": (
            f"No method is named: the change to explain is too small (removing tokens moves the output by at most "
            f"{moved:.6f}, under {FLOOR:g}).")}
    area = deletion["area_over_random"]
    eligible = [m for m in deletion["ranking"] if m in explanations and m not in withheld and area[m] > 0]
    if not eligible:
        return {**out, "status": "none_better", "text": "No method is named: none of the ones that may be named "
                "lowered the output faster than random orders." + _withheld_text(withheld)}
    best = eligible[0]
    curve = np.asarray(deletion["curves"][best], dtype=np.float64)
    first_step = abs(float(curve[1] - curve[0])) if len(curve) > 1 else 0.0
    rand = np.asarray(deletion["random_mean"], dtype=np.float64)
    if len(rand) > 1 and abs(float(rand[1] - rand[0])) >= ONE_TOKEN_SHARE * moved:
        return {**out, "status": "any_token", "text": (
            f"No method is named: removing any one token already moves the output by about as much as removing them "
            f"all (random orders too: {abs(float(rand[1] - rand[0])):.4f} after one removal, of {moved:.4f} at most), "
            "so the deletion test cannot tell the methods apart on this input.") + _withheld_text(withheld)}
    if first_step >= ONE_TOKEN_SHARE * moved:
        top = int(checks.ranking(scores[best])[0])
        same = [m for m in explanations if m in scores and int(checks.ranking(scores[m])[0]) == top]
        return {**out, "status": "one_token", "tied": same, "text": (
            f"No method is named: one token decides the test. Removing '{tokens[top]['token']}' alone moves the output "
            f"by {first_step:.4f}, {100 * first_step / moved:.0f}% of the largest change seen; the test then only says "
            f"which methods put that token first ({', '.join(NAMES[m] for m in same)}), not which is most faithful.")
            + _withheld_text(withheld)}
    tied = [m for m in eligible[1:] if area[m] >= (1 - TIE_SHARE) * area[best]]
    if tied:
        names = ", ".join(NAMES[m] for m in [best] + tied)
        return {**out, "status": "tie", "tied": [best] + tied, "text": (
            f"No single method is named: {names} tie (deletion areas within {100 * TIE_SHARE:.0f}% of each other).")
            + _withheld_text(withheld)}
    text = f"{NAMES[best]}: its top tokens lower the output fastest against random orders."
    if best in SIGNLESS:
        text += " It has no sign: it ranks tokens by attention flow, not by their effect on the output."
    return {**out, "method": best, "status": "claimed", "text": text + _withheld_text(withheld)}


def _withheld_text(withheld: dict) -> str:
    return "".join(f" {NAMES[m].capitalize()} is not named: {why}." for m, why in withheld.items())


def notes(scores: dict, tokens: list[dict], positions: list[int], value: float, quantity: str,
          agreement: dict | None) -> list[dict]:
    """Notes this input's numbers call for: an attention sink in rollout; saturation where gradient x input
    contradicts integrated gradients."""
    out = []
    roll = scores.get("attention_rollout")
    if roll is not None and len(roll) and float(np.sum(roll)) > 0:
        share = float(roll[0]) / float(np.sum(roll))
        if positions and positions[0] == 0 and int(np.argmax(roll)) == 0 and share >= SINK_SHARE:
            out.append({"kind": "attention_sink", "text": (
                f"Rollout puts {100 * share:.0f}% of its weight on the first token, '{tokens[0]['token']}': an "
                "attention sink. Many heads send their attention to the first position when nothing else is useful "
                "to them (in a causal model it is the one token every later token sees), and rollout multiplies "
                "that up layer by layer, so the first token collects the flow whatever it says. That weight is where "
                "attention parked, not what the output rests on.")})
    rho = _pair(agreement, "gradient_x_input", "integrated_gradients")
    if rho is not None and rho < SATURATION_RHO:
        saturated = "probability" in quantity and (value > 0.95 or value < 0.05)
        out.append({"kind": "saturation", "text": (
            f"Gradient x input and integrated gradients disagree (Spearman {rho:.2f}). Gradient x input reads the "
            "gradient at the input alone; where the output is saturated (a softmax near 0 or 1 is flat, so its "
            "gradient is tiny or points elsewhere) it can contradict integrated gradients, which add the gradient up "
            "along the whole path from the baseline." + (f" Here the output is {value:.4f}: saturated." if saturated
                                                         else ""))})
    return out


def _pair(agreement: dict | None, a: str, b: str) -> float | None:
    if not agreement or a not in agreement["methods"] or b not in agreement["methods"]:
        return None
    return agreement["spearman"][agreement["methods"].index(a)][agreement["methods"].index(b)]
