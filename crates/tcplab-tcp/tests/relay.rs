//! Relay mode (`Connection::relay`): the sending side of a spoofing PEP, talking to an
//! ordinary tcplab receiver after a handshake that passed end to end.

use tcplab_tcp::{Config, Connection, State, NS_PER_MS};

#[test]
fn a_relay_sends_the_originators_stream_and_never_acks_the_peer() {
    let cfg = Config::default();
    let mut sender = Connection::client(cfg.clone(), 1000, 80, 5000, 0);
    let mut rcv = Connection::server(cfg.clone(), 80, 1000, 9000, 777);
    // The handshake passes end to end (the relay only watches it).
    let syn = sender.poll_transmit(0).unwrap();
    rcv.handle_segment(&syn, NS_PER_MS);
    let synack = rcv.poll_transmit(NS_PER_MS).unwrap();
    sender.handle_segment(&synack, 2 * NS_PER_MS);
    let ack = sender.poll_transmit(2 * NS_PER_MS).unwrap();
    rcv.handle_segment(&ack, 3 * NS_PER_MS);
    assert_eq!(rcv.state(), State::Established);
    // The relay takes over the sender's stream: its ISN, the options both SYNs negotiated.
    let mut relay = Connection::relay(cfg, 1000, 80, 5000, 0, &synack, Some(2 * NS_PER_MS));
    assert!(relay.is_relay() && relay.state() == State::Established);
    relay.relay_echo(ack.ack, 1234);
    let total = 100_000u64;
    relay.app_supply(total);
    relay.close();
    let mut now = 4 * NS_PER_MS;
    let mut sent = 0;
    for _ in 0..10_000 {
        now += NS_PER_MS;
        while let Some(seg) = relay.poll_transmit(now) {
            assert!(
                seg.payload_len > 0 || seg.flags.fin(),
                "no pure ACK from a relay"
            );
            // The reverse stream stays end to end: the originator's ACK and window.
            assert_eq!((seg.ack, seg.window), (ack.ack, 1234));
            assert!(seg.options.timestamps.is_some());
            sent += 1;
            rcv.handle_segment(&seg, now);
        }
        while let Some(seg) = rcv.poll_transmit(now) {
            relay.handle_segment(&seg, now);
        }
        if relay.poll_timeout().is_some_and(|t| t <= now) || rcv.poll_timeout().is_some() {
            relay.handle_timeout(now);
            rcv.handle_timeout(now);
        }
        if relay.state() == State::FinWait2 {
            break;
        }
    }
    assert_eq!(
        relay.state(),
        State::FinWait2,
        "the receiver acknowledged the FIN"
    );
    assert_eq!(rcv.stats().bytes_delivered, total);
    assert!(rcv.peer_finished());
    assert!(sent >= total / 1448);
    // Data from the peer (its reply) is left to pass end to end: nothing to send.
    let mut reply = rcv.poll_transmit(now).unwrap_or(ack);
    reply.payload_len = 100;
    relay.handle_segment(&reply, now);
    assert!(relay.poll_transmit(now).is_none());
}
