"""Is a model trained here overfitting? A claim with its conditions, read off one run's losses: the
validation loss rose past its lowest point by more than RISE while the training loss kept falling over the
same steps. Fewer than MIN_EVALS validation passes, or a rise inside RISE, claim nothing."""

from __future__ import annotations

MIN_EVALS = 3  # validation passes needed before a trend is read
RISE = 0.01  # a rise of the validation loss of under 1% of its lowest value is noise between passes


def _train_near(losses: list[float], step: int, span: int = 10) -> float | None:
    """The mean training loss over the `span` steps up to `step` (steps count from 1; losses[i] is step i+1)."""
    window = losses[max(0, step - span):max(1, step)]
    return sum(window) / len(window) if window else None


def overfitting(losses: list[float], evals: list[dict]) -> dict:
    """{"overfitting": True / False / None (cannot tell), "best_step", "best_val", "final_val", "train_then",
    "train_now", "why"}, from the training losses (one a step) and the validation passes ({step, val_loss})."""
    passes = [e for e in evals if e.get("val_loss") is not None]
    if len(passes) < MIN_EVALS or not losses:
        return {"overfitting": None, "why": f"fewer than {MIN_EVALS} validation passes: no trend to read"}
    best = min(passes, key=lambda e: e["val_loss"])
    last = passes[-1]
    train_then, train_now = _train_near(losses, best["step"]), _train_near(losses, len(losses))
    out = {"best_step": best["step"], "best_val": best["val_loss"], "final_val": last["val_loss"],
           "train_then": None if train_then is None else round(train_then, 4),
           "train_now": None if train_now is None else round(train_now, 4)}
    rose = last["step"] > best["step"] and last["val_loss"] > best["val_loss"] * (1 + RISE)
    fell = train_then is not None and train_now is not None and train_now < train_then
    if rose and fell:
        return {**out, "overfitting": True,
                "why": f"validation loss rose from {best['val_loss']:.3f} (step {best['step']:,}) to "
                       f"{last['val_loss']:.3f} (step {last['step']:,}) while the training loss fell from "
                       f"{train_then:.3f} to {train_now:.3f}"}
    return {**out, "overfitting": False,
            "why": "the validation loss ended within 1% of its lowest" if not rose else
                   "the validation loss rose, but so did the training loss"}
