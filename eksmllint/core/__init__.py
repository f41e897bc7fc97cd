"""The small typed core: findings, fixes, rules, the registry and the engine."""
