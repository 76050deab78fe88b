"""Reports: a reproduction's checks against the paper (``checks``), the HTML pages (``html``),
the figure conventions (``plots``), a run's figures (``runplot``) and the ``tcplab plot``
command (``cli``)."""
