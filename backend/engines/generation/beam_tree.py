"""The beam tree, rebuilt from `BeamRecorder`'s record after generate returns.

Generate never says which hypotheses it dropped; the recorder kept each step's running beams,
their top candidates and which (parent, token) pairs survived. From that this draws every
candidate as a node: kept (became a running beam), eos (an ended hypothesis) or pruned.
"""

from __future__ import annotations

from backend.engines.generation.result import TokenText, rounded

BEAM_TREE_STEPS = 40  # steps recorded; more would not be drawable


def beam_tree(rec: dict, best: list[int], eos: set[int], tok: TokenText) -> dict:
    """Nodes of the beam tree: the running beams of each step and their top candidates.

    Each node: id, depth (tokens generated), parent, token, logprob (the token's), cum_logprob
    (sum over the path), status: root | kept (became a running beam) | eos (an ended
    hypothesis) | pruned; `best` marks the path of the returned best sequence.
    """
    nodes = [{"id": 0, "depth": 0, "parent": None, "token": "", "token_id": None, "logprob": 0.0,
              "cum_logprob": 0.0, "status": "root", "best": True, "beam": 0}]
    row_node: dict[int, int] = {0: 0}  # running row at the current depth -> node id
    n_steps = len(rec["cand_ids"])
    for t in range(n_steps):
        row_node = _grow(nodes, rec, t, row_node, eos, tok)
        if not row_node:
            break
    _mark_best(nodes, best)
    return {"nodes": nodes, "steps": n_steps, "truncated": bool(rec["truncated"]), "max_steps": BEAM_TREE_STEPS}


def _grow(nodes: list[dict], rec: dict, t: int, row_node: dict[int, int], eos: set[int], tok: TokenText) -> dict[int, int]:
    """Add step t's candidates under each running row; return the next step's row -> node id."""
    cum = rec["cum"][t]
    kept: dict[tuple[int, int], int] = {}
    if t + 1 < len(rec["cum"]):
        for new_row, (parent, token) in enumerate(zip(rec["parents"][t], rec["tokens"][t])):
            kept.setdefault((int(parent), int(token)), new_row)
    next_row_node: dict[int, int] = {}
    # an EOS candidate ends a hypothesis when it ranks within the step's top num_beams
    pool = sorted((cum[r] + lp for r in row_node for lp in rec["cand_logp"][t][r]), reverse=True)
    eos_floor = pool[min(len(cum), len(pool)) - 1] if pool else float("inf")
    for row, node_id in row_node.items():
        cand = list(zip(rec["cand_ids"][t][row], rec["cand_logp"][t][row]))
        # a kept child outside this row's top candidates is still drawn
        for (p, token), _ in kept.items():
            if p == row and token not in {int(c) for c, _ in cand}:
                cand.append((token, None))
        for token, lp in cand:
            token = int(token)
            new_row = kept.get((row, token))
            if lp is None:
                lp = rec["cum"][t + 1][new_row] - cum[row]
            if new_row is not None:
                status = "kept"
            elif token in eos and cum[row] + lp >= eos_floor - 1e-6:
                status = "eos"
            else:
                status = "pruned"
            nid = len(nodes)
            nodes.append({"id": nid, "depth": t + 1, "parent": node_id, "token": tok(token), "token_id": token,
                          "logprob": rounded(lp, 4), "cum_logprob": rounded(cum[row] + lp, 4), "status": status,
                          "best": False, "beam": row})
            if new_row is not None:
                next_row_node[new_row] = nid
    return next_row_node


def _mark_best(nodes: list[dict], best: list[int]) -> None:
    """Flag the nodes on the returned best sequence's path."""
    by_parent: dict[int, dict[int, int]] = {}
    for n in nodes[1:]:
        by_parent.setdefault(n["parent"], {}).setdefault(n["token_id"], n["id"])
    cur = 0
    for token in best:
        nxt = by_parent.get(cur, {}).get(int(token))
        if nxt is None:
            break
        nodes[nxt]["best"] = True
        cur = nxt
