"""Scenarios: the TOML parser and its checks (``parse``), the typed field readers
(``fields``), units (``units``), the hop kinds with their own modules (``wlan``, ``radio``), the
lists defined once in Rust (``registry``) and programmatic WLAN configurations
(``wlan_configs``)."""
