from __future__ import annotations

import numpy as np
import pytest

from tcplab.analyze.fairness import ap_drops, jain, throughput_series, unhappy


def test_jain_bounds() -> None:
    assert jain([3, 3, 3]) == pytest.approx(1.0)
    assert jain([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain([2, 1]) == pytest.approx(9 / 10)
    with pytest.raises(ValueError, match="jain"):
        jain([])


def test_throughput_series_and_unhappy_detection() -> None:
    t = np.arange(0, 21) * 1e9
    # flow 0: 1 MB/s throughout; flow 1: 1 MB/s, then nothing from 5 s to 12 s, then 1 MB/s.
    d0 = np.arange(0, 21) * 1e6
    rate1 = np.where((np.arange(20) >= 5) & (np.arange(20) < 12), 0.0, 1e6)
    d1 = np.concatenate([[0.0], np.cumsum(rate1)])
    ts = {
        "t_ns": np.concatenate([t, t]),
        "flow": np.concatenate([np.zeros(21, int), np.ones(21, int)]),
        "delivered": np.concatenate([d0, d1]),
    }
    tb, r = throughput_series(ts, [0, 1], 1.0)
    assert r.shape == (2, 20)
    assert r[0] == pytest.approx(np.full(20, 8e6))
    found = unhappy(tb, r, fraction=0.1, min_s=5.0)
    assert found == [(1, 5.0, 12.0)]
    # 7 s below the share is not enough for min_s = 8
    assert unhappy(tb, r, min_s=8.0) == []


def test_ap_drops_split() -> None:
    rows = [
        {"kind": "link", "dir": "fwd"},
        {
            "kind": "wlan",
            "role": "ap",
            "drops_queue_data": 1,
            "drops_queue_ack": 5,
            "drops_retry_data": 0,
            "drops_retry_ack": 2,
            "drops_handover": 3,
        },
        {"kind": "wlan", "role": "station", "drops_queue_data": 9},
    ]
    assert ap_drops(rows) == {
        "drops_queue_data": 1,
        "drops_queue_ack": 5,
        "drops_retry_data": 0,
        "drops_retry_ack": 2,
        "drops_handover": 3,
    }
