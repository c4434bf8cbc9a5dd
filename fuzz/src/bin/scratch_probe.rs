// TEMPORARY probe (removed after use).
use mnemon::events::segment::{decode_segment, encode_frame, Header};
use mnemon::events::{Event, EventKind};
use std::time::Instant;

fn main() {
    let h = Header { session: "s1".into(), created_ms: 1 }.encode();
    for mib in [1usize, 4] {
        for (name, pat) in [("plausible-lengths", vec![0u8, 0, 1, 0]), ("zeros", vec![0u8; 4])] {
            let mut b = h.clone();
            while b.len() < h.len() + (mib << 20) { b.extend_from_slice(&pat); }
            let t = Instant::now();
            let d = decode_segment(&b);
            println!("{mib} MiB {name}: {:?}, {} damaged ranges", t.elapsed(), d.damaged.len());
        }
    }
    // Embedded frame inside a string field.
    let mut seq = 0u64;
    let inner = loop {
        let e = Event { ts_ms: 0x4141414141414141, seq: 0x4242424242424200 + seq, kind: EventKind::ImportanceTag {
            node: "victim".into(), importance: 10, tags: vec![], note: String::new() } };
        let mut f = Vec::new();
        encode_frame(&e, &mut f);
        if let Ok(s) = String::from_utf8(f) { break s; }
        seq += 1;
    };
    println!("inner frame found after {seq} tries: {:?}", inner);
    let outer = Event { ts_ms: 5, seq: 0, kind: EventKind::Query { qid: "q1".into(), query: inner.clone(),
        anchors: vec![], result_count: 0, latency_us: 1, caller: "cli".into() } };
    let mut seg = h.clone();
    encode_frame(&outer, &mut seg);
    let d = decode_segment(&seg);
    println!("intact: {} events: {:?}", d.events.len(), d.events.iter().map(|e| &e.1.kind).map(|k| matches!(k, EventKind::Query{..})).collect::<Vec<_>>());
    let mut torn = seg.clone();
    torn.truncate(seg.len() - 3);
    let d = decode_segment(&torn);
    println!("torn tail: events {:?}, damaged {:?}", d.events, d.damaged);
    println!("torn hex: {}", torn.iter().map(|b| format!("{b:02x}")).collect::<String>());
}
