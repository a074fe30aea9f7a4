/**
 * Dependency and cache directories (and bytecode): never committed and never
 * the agent's work, whatever the repository's .gitignore says.
 */
export const CACHE_PATTERNS = ["node_modules", ".venv", "venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".tox", ".nox", ".eggs", "*.egg-info", ".cache", "*.pyc"];
