"""Real hosts and real packets: the real-time emulator (``emu``), downloads through it
(``transfer``), the cache of real-stack results (``cache``) and ``tcplab validate linux``
(``validate``)."""
