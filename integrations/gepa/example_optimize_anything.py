"""Evolve a blis-ts routing policy with GEPA's ``optimize_anything`` (docs/evaluate.md, "GEPA").

The reflection model is a plain callable (GEPA's ``LanguageModel``: a prompt string or chat messages in, text
out), either an OpenAI-compatible chat endpoint or, with ``--offline``, a fake that always proposes the same
prefix-aware router -- enough to see the loop run, score and improve without a model::

    pip install gepa                      # Python >= 3.10
    npm ci && npm run build               # blis-ts, once
    python3 integrations/gepa/example_optimize_anything.py --offline --max-evals 12
    OPENAI_API_KEY=... python3 integrations/gepa/example_optimize_anything.py \
        --api-base https://api.openai.com/v1 --model gpt-4o-mini --max-evals 100

Candidates are ``{"routing": JAVASCRIPT}``; each example is one run of the ``routing-prefix-heavy`` suite
(``scenario@seed``), evaluated by ``oa_evaluator.evaluate`` through a warm ``blis evaluate --serve``. GEPA
writes its run under ``--output-dir`` (default ``gepa_output/``, ignored by git). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Union

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oa_evaluator  # noqa: E402 -- after the path insert

Prompt = Union[str, List[Dict[str, Any]]]

#: What the offline reflection model always proposes: route to the instance holding the most of the prompt's
#: prefix, traded against its queue and KV use.
OFFLINE_PROPOSAL = """function route(request, state) {
  let best = state.instances[0];
  let bestScore = -Infinity;
  for (const inst of state.instances) {
    const cached = inst.cachedPrefixBlocks / Math.max(1, request.prefixHashes.length);
    const score = 2 * cached - inst.queueDepth / 10 - inst.kvUtilization;
    if (score > bestScore) { bestScore = score; best = inst; }
  }
  return { target: best.id, reason: 'prefix affinity' };
}
"""


def offline_lm(prompt: Prompt) -> str:
    """A fake reflection model: no network, the same proposal every time (in a fenced block, as GEPA expects)."""
    return "Keep requests on the instance that caches their prefix.\n```\n%s```\n" % OFFLINE_PROPOSAL


def openai_lm(api_base: str, model: str, api_key: str, timeout_s: float = 300.0) -> Callable[[Prompt], str]:
    """A reflection model on an OpenAI-compatible ``/chat/completions`` endpoint."""
    url = api_base.rstrip("/") + "/chat/completions"

    def call(prompt: Prompt) -> str:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        req = urllib.request.Request(url, data=json.dumps({"model": model, "messages": messages}).encode("utf-8"), method="POST")
        req.add_header("Content-Type", "application/json")
        if api_key:
            req.add_header("Authorization", "Bearer " + api_key)
        with urllib.request.urlopen(req, timeout=timeout_s) as res:  # noqa: S310 -- the endpoint the user named
            doc = json.loads(res.read().decode("utf-8"))
        return str(doc["choices"][0]["message"]["content"])

    return call


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--offline", action="store_true", help="use the fake reflection model (no network)")
    p.add_argument("--api-base", default=os.environ.get("OPENAI_API_BASE", ""), help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")
    p.add_argument("--model", default="gpt-4o-mini")
    p.add_argument("--max-evals", type=int, default=40, help="evaluations (one example run each)")
    p.add_argument("--output-dir", default="gepa_output")
    args = p.parse_args(argv)
    if not args.offline and not args.api_base:
        p.error("give --api-base URL (an OpenAI-compatible endpoint) or --offline")
    from gepa.optimize_anything import OptimizeAnythingConfig, optimize_anything

    lm = offline_lm if args.offline else openai_lm(args.api_base, args.model, os.environ.get("OPENAI_API_KEY", ""))
    oa_evaluator.check_setup()  # a wrong suite or an unbuilt checkout stops here, before any model call
    seed = oa_evaluator.seed_candidate()
    result = optimize_anything(
        seed,
        evaluator=oa_evaluator.evaluate,
        dataset=oa_evaluator.dataset(),
        objective="Maximize combined_score of the blis-ts routing-prefix-heavy suite (SLO attainment, TTFT, prefix-cache hits).",
        background="A candidate is {\"routing\": JavaScript defining function route(request, state)}; docs/policies.md has the contract.",
        config=OptimizeAnythingConfig(
            engine="gepa",
            max_evals=args.max_evals,
            output_dir=args.output_dir,
            engine_config={"reflection": {"reflection_lm": lm}},
        ),
    )
    seed_score, _ = oa_evaluator.evaluate(seed)
    best_score, _ = oa_evaluator.evaluate(result.best_candidate)
    print(json.dumps({"seed_score": round(seed_score, 4), "best_score": round(best_score, 4), "evaluations": result.total_evals}))
    print(result.best_candidate["routing"] if isinstance(result.best_candidate, dict) else result.best_candidate)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
