"""Stand-in for openevolve.config (0.4.x): the field names of each section, which dacite fills from the YAML and
(without strict mode) silently ignores when misspelt -- the tests check the example config against them."""

_MODEL = ("api_base", "api_key", "name", "provider", "init_client", "weight", "system_message", "temperature", "top_p",
          "max_tokens", "timeout", "retries", "retry_delay", "random_seed", "reasoning_effort", "max_budget_usd", "manual_mode")

FIELDS = {
    "": ("max_iterations", "checkpoint_interval", "log_level", "log_dir", "random_seed", "language", "file_suffix", "llm", "prompt",
         "database", "evaluator", "evolution_trace", "prompt_meta_evolution", "diff_based_evolution", "max_code_length", "diff_pattern",
         "early_stopping_patience", "convergence_threshold", "early_stopping_metric", "max_tasks_per_child"),
    "llm": _MODEL + ("models", "evaluator_models", "primary_model", "primary_model_weight", "secondary_model", "secondary_model_weight"),
    "llm.models": _MODEL,
    "prompt": ("template_dir", "system_message", "evaluator_system_message", "programs_as_changes_description",
               "system_message_changes_description", "initial_changes_description", "num_top_programs", "num_diverse_programs",
               "use_template_stochasticity", "template_variations", "use_meta_prompting", "meta_prompt_weight", "include_artifacts",
               "max_artifact_bytes", "artifact_security_filter", "suggest_simplification_after_chars", "include_changes_under_chars",
               "concise_implementation_max_lines", "comprehensive_implementation_min_lines", "diff_summary_max_line_len",
               "diff_summary_max_lines", "code_length_threshold"),
    "database": ("db_path", "in_memory", "log_prompts", "population_size", "archive_size", "num_islands", "elite_selection_ratio",
                 "exploration_ratio", "exploitation_ratio", "diversity_metric", "feature_dimensions", "feature_bins",
                 "diversity_reference_size", "migration_interval", "migration_rate", "random_seed", "artifacts_base_path",
                 "artifact_size_threshold", "cleanup_old_artifacts", "artifact_retention_days", "max_snapshot_artifacts",
                 "novelty_llm", "embedding_model", "similarity_threshold"),
    "evaluator": ("timeout", "max_retries", "memory_limit_mb", "cpu_limit", "cascade_evaluation", "cascade_thresholds",
                  "parallel_evaluations", "distributed", "use_llm_feedback", "llm_feedback_weight", "enable_artifacts",
                  "max_artifact_storage"),
}
