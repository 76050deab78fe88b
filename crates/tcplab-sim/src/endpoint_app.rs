//! The applications of tcplab's real-time TCP host (`endpoint.rs`): an
//! HTTP/1.x file server, a bulk source, and an HTTP/1.x client that saves
//! one response body. Byte handling only: no sockets, no clock.
//!
//! Every stream the host sends is a `Stream`: a head of bytes (a response's
//! status line and header fields, a request) followed by a body read from a
//! file or generated (the bulk pattern), addressed by its data offset, so a
//! retransmission reads the same bytes again and nothing is copied into a
//! send buffer.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The largest request or response head the host accepts (bytes).
pub const MAX_HEAD: usize = 16 * 1024;
/// Bytes read from a file at a time (the body's read-ahead).
const FILE_CHUNK: usize = 256 * 1024;

/// Byte `k` of the bulk source: the little-endian bytes of
/// `(k / 4) · 0x9E3779B1 mod 2³²`. Every 4-byte word differs from every
/// other in the first 16 GiB (an odd multiplier is a bijection mod 2³²), so
/// a byte delivered at the wrong offset changes the stream's digest.
#[inline]
pub fn pattern_word(w: u64) -> [u8; 4] {
    (w as u32).wrapping_mul(0x9E37_79B1).to_le_bytes()
}

/// Fill `out` with the bulk source's bytes from data offset `off`.
pub fn pattern_fill(off: u64, out: &mut [u8]) {
    let mut k = off;
    let mut i = 0;
    while i < out.len() {
        let w = pattern_word(k / 4);
        let at = (k % 4) as usize;
        let n = (4 - at).min(out.len() - i);
        out[i..i + n].copy_from_slice(&w[at..at + n]);
        i += n;
        k += n as u64;
    }
}

/// A file body read on demand, with one read-ahead chunk.
pub struct FileBody {
    file: File,
    len: u64,
    cache: Vec<u8>,
    cache_off: u64,
}

impl FileBody {
    fn fill(&mut self, off: u64, out: &mut [u8]) -> Result<(), String> {
        let mut done = 0;
        while done < out.len() {
            let k = off + done as u64;
            let in_cache = k >= self.cache_off && k < self.cache_off + self.cache.len() as u64;
            if !in_cache {
                let n = (self.len - k).min(FILE_CHUNK as u64) as usize;
                self.cache.resize(n, 0);
                self.file
                    .read_exact_at(&mut self.cache, k)
                    .map_err(|e| format!("reading the served file at byte {k}: {e}"))?;
                self.cache_off = k;
            }
            let at = (k - self.cache_off) as usize;
            let n = (self.cache.len() - at).min(out.len() - done);
            out[done..done + n].copy_from_slice(&self.cache[at..at + n]);
            done += n;
        }
        Ok(())
    }
}

/// What follows a stream's head.
pub enum Body {
    None,
    File(FileBody),
    /// The bulk source (`pattern_fill`), `len` bytes or unlimited.
    Pattern(Option<u64>),
}

/// One direction of bytes the host sends on a connection.
pub struct Stream {
    pub head: Vec<u8>,
    pub body: Body,
}

impl Stream {
    pub fn empty() -> Stream {
        Stream {
            head: Vec::new(),
            body: Body::None,
        }
    }

    /// Total bytes (None: unlimited).
    pub fn total(&self) -> Option<u64> {
        let h = self.head.len() as u64;
        match &self.body {
            Body::None => Some(h),
            Body::File(f) => Some(h + f.len),
            Body::Pattern(n) => n.map(|n| h + n),
        }
    }

    /// The bytes at data offset `off` (0 = the first byte of the head).
    pub fn fill(&mut self, off: u64, out: &mut [u8]) -> Result<(), String> {
        let h = self.head.len() as u64;
        let mut k = off;
        let mut out = out;
        if k < h {
            let n = ((h - k) as usize).min(out.len());
            out[..n].copy_from_slice(&self.head[k as usize..k as usize + n]);
            out = &mut out[n..];
            k += n as u64;
        }
        if out.is_empty() {
            return Ok(());
        }
        match &mut self.body {
            Body::None => Err(format!("no byte {k} in a stream of {h}")),
            Body::File(f) => f.fill(k - h, out),
            Body::Pattern(_) => {
                pattern_fill(k - h, out);
                Ok(())
            }
        }
    }
}

/// End of an HTTP head (RFC 9112 §2.1: CRLF CRLF; a bare LF is tolerated,
/// §2.2), as the index one past it.
fn head_end(b: &[u8]) -> Option<usize> {
    for i in 0..b.len() {
        if b[i] == b'\n' {
            if b[i + 1..].starts_with(b"\r\n") {
                return Some(i + 3);
            }
            if b[i + 1..].starts_with(b"\n") {
                return Some(i + 2);
            }
        }
    }
    None
}

/// Percent-decoding of a request target's path (RFC 3986 §2.1).
fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The file a request target names under `root`, or None if it leaves
/// `root` (a `..` segment) or is malformed.
fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    if !path.starts_with('/') {
        return None;
    }
    let raw = percent_decode(path)?;
    let path = std::str::from_utf8(&raw).ok()?;
    let mut out = root.to_path_buf();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return None,
            s if s.contains('\0') => return None,
            s => out.push(s),
        }
    }
    Some(out)
}

fn response_head(status: &str, len: u64, extra: &str) -> Vec<u8> {
    format!(
        "HTTP/1.0 {status}\r\nServer: tcplab\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: {len}\r\nConnection: close\r\n{extra}\r\n"
    )
    .into_bytes()
}

fn error_response(status: &str, extra: &str, head_only: bool) -> Stream {
    let body = format!("{status}\n");
    let mut head = response_head(status, body.len() as u64, extra);
    if !head_only {
        head.extend_from_slice(body.as_bytes());
    }
    Stream {
        head,
        body: Body::None,
    }
}

/// The server's answer to one request head (RFC 9112 §3: request line
/// `method SP request-target SP HTTP-version`): GET or HEAD of a regular
/// file under `root` (200), else 400, 404, 405 or 505. Also the log line.
pub fn http_respond(root: &Path, head: &[u8]) -> (Stream, String) {
    let text = String::from_utf8_lossy(head);
    let line = text.lines().next().unwrap_or("").trim_end();
    let parts: Vec<&str> = line.split(' ').collect();
    let (method, target, version) = match parts.as_slice() {
        [m, t, v] => (*m, *t, *v),
        _ => return (error_response("400 Bad Request", "", false), line.into()),
    };
    let head_only = method == "HEAD";
    if !version.starts_with("HTTP/1.") {
        let s = error_response("505 HTTP Version Not Supported", "", head_only);
        return (s, line.into());
    }
    if method != "GET" && !head_only {
        let s = error_response("405 Method Not Allowed", "Allow: GET, HEAD\r\n", false);
        return (s, line.into());
    }
    let Some(path) = resolve(root, target) else {
        return (
            error_response("400 Bad Request", "", head_only),
            line.into(),
        );
    };
    let file = File::open(&path).ok().and_then(|f| {
        f.metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| (f, m.len()))
    });
    let Some((file, len)) = file else {
        return (error_response("404 Not Found", "", head_only), line.into());
    };
    let head = response_head("200 OK", len, "");
    let body = if head_only {
        Body::None
    } else {
        Body::File(FileBody {
            file,
            len,
            cache: Vec::new(),
            cache_off: 0,
        })
    };
    (Stream { head, body }, line.into())
}

/// What the server application does on one connection.
pub enum ServerApp {
    /// HTTP/1.x GET and HEAD of files under the directory.
    Http(PathBuf),
    /// The bulk source: sends this many bytes (None: until the peer
    /// closes) from the moment the connection is established; whatever the
    /// peer sends is read and counted.
    Bulk(Option<u64>),
}

/// The server side of one connection.
pub struct ServerConn {
    /// Request bytes until the head is complete.
    req: Vec<u8>,
    /// The response is chosen (the head arrived, or the bulk source started).
    pub responded: bool,
    /// The request line the response answered.
    pub request: Option<String>,
    /// Bytes read from the peer.
    pub read: u64,
}

impl ServerConn {
    pub fn new() -> ServerConn {
        ServerConn {
            req: Vec::new(),
            responded: false,
            request: None,
            read: 0,
        }
    }

    /// Bytes the peer sent, in order; returns the response once it is known.
    pub fn on_data(&mut self, app: &ServerApp, data: &[u8]) -> Option<Stream> {
        self.read += data.len() as u64;
        let ServerApp::Http(root) = app else {
            return None;
        };
        if self.responded {
            return None;
        }
        let room = MAX_HEAD - self.req.len();
        self.req.extend_from_slice(&data[..data.len().min(room)]);
        let end = head_end(&self.req);
        if end.is_none() && self.req.len() < MAX_HEAD {
            return None;
        }
        self.responded = true;
        let (s, line) = match end {
            Some(e) => http_respond(root, &self.req[..e]),
            None => {
                let s = error_response("431 Request Header Fields Too Large", "", false);
                (s, String::new())
            }
        };
        self.request = Some(line);
        self.req = Vec::new();
        Some(s)
    }

    /// The connection is established: the bulk source starts at once.
    pub fn on_established(&mut self, app: &ServerApp) -> Option<Stream> {
        match app {
            ServerApp::Bulk(n) if !self.responded => {
                self.responded = true;
                Some(Stream {
                    head: Vec::new(),
                    body: Body::Pattern(*n),
                })
            }
            _ => None,
        }
    }
}

impl Default for ServerConn {
    fn default() -> Self {
        Self::new()
    }
}

/// An HTTP/1.x client: one GET, the response body written to a file.
pub struct HttpClient {
    head: Vec<u8>,
    head_done: bool,
    pub status: Option<u16>,
    pub content_length: Option<u64>,
    pub body_bytes: u64,
    out: Option<std::io::BufWriter<File>>,
    pub error: Option<String>,
}

impl HttpClient {
    /// The request (RFC 9112 §3) for `target` at `host`, and a client that
    /// saves the response body to `save` (created now).
    pub fn new(target: &str, host: &str, save: &Path) -> Result<(HttpClient, Stream), String> {
        let f = File::create(save).map_err(|e| format!("--save {}: {e}", save.display()))?;
        let req = format!(
            "GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: tcplab\r\nAccept: */*\r\n\
             Connection: close\r\n\r\n"
        );
        let c = HttpClient {
            head: Vec::new(),
            head_done: false,
            status: None,
            content_length: None,
            body_bytes: 0,
            out: Some(std::io::BufWriter::with_capacity(1 << 20, f)),
            error: None,
        };
        Ok((
            c,
            Stream {
                head: req.into_bytes(),
                body: Body::None,
            },
        ))
    }

    fn fail(&mut self, e: String) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.out = None;
    }

    /// Response bytes in order.
    pub fn on_data(&mut self, data: &[u8]) {
        let mut data = data;
        if !self.head_done {
            let keep = self.head.len();
            self.head
                .extend_from_slice(&data[..data.len().min(MAX_HEAD - keep)]);
            let Some(end) = head_end(&self.head) else {
                if self.head.len() >= MAX_HEAD {
                    self.fail("the response head exceeds 16 KiB".into());
                }
                return;
            };
            self.head_done = true;
            data = &data[end - keep..];
            self.parse_head(end);
        }
        if self.error.is_some() {
            return;
        }
        self.body_bytes += data.len() as u64;
        if let Some(n) = self.content_length {
            if self.body_bytes > n {
                let e = format!("{} body bytes, Content-Length {n}", self.body_bytes);
                self.fail(e);
                return;
            }
        }
        if let Some(w) = self.out.as_mut() {
            if let Err(e) = w.write_all(data) {
                self.fail(format!("writing the saved file: {e}"));
            }
        }
    }

    fn parse_head(&mut self, end: usize) {
        let text = String::from_utf8_lossy(&self.head[..end]).into_owned();
        let mut lines = text.lines();
        let status = lines.next().unwrap_or("");
        // RFC 9112 §4: HTTP-version SP status-code SP [reason-phrase].
        let code = status
            .strip_prefix("HTTP/1.")
            .and_then(|s| s.split(' ').nth(1))
            .and_then(|c| c.parse::<u16>().ok());
        let Some(code) = code else {
            self.fail(format!("not an HTTP/1.x status line: {status:?}"));
            return;
        };
        self.status = Some(code);
        for l in lines {
            let Some((k, v)) = l.split_once(':') else {
                continue;
            };
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            if k == "content-length" {
                self.content_length = v.parse().ok();
            } else if k == "transfer-encoding" && !v.eq_ignore_ascii_case("identity") {
                self.fail(format!("Transfer-Encoding {v} is not supported"));
            }
        }
        if !(200..300).contains(&code) {
            self.fail(format!("status {code}"));
        }
    }

    /// The whole body arrived (by its Content-Length).
    pub fn complete(&self) -> bool {
        self.error.is_none() && self.content_length == Some(self.body_bytes)
    }

    /// The server closed: the body ends here. Flushes the file.
    pub fn finish(&mut self, peer_closed: bool) {
        if self.error.is_none() {
            if !self.head_done {
                self.fail("the connection ended before a response".into());
            } else if let Some(n) = self.content_length.filter(|&n| n != self.body_bytes) {
                self.fail(format!("{} of {n} body bytes arrived", self.body_bytes));
            } else if self.content_length.is_none() && !peer_closed {
                self.fail("the connection ended before the server closed".into());
            }
        }
        if let Some(mut w) = self.out.take() {
            if let Err(e) = w.flush() {
                self.fail(format!("writing the saved file: {e}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tcplab-app-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_pattern_is_addressed_by_offset() {
        let mut a = vec![0u8; 1001];
        pattern_fill(0, &mut a);
        let mut b = vec![0u8; 10];
        pattern_fill(333, &mut b);
        assert_eq!(&a[333..343], &b[..]);
        assert_eq!(&a[0..4], &0u32.to_le_bytes());
        assert_eq!(&a[4..8], &0x9E37_79B1u32.to_le_bytes());
    }

    #[test]
    fn a_get_serves_the_file_and_refuses_escapes() {
        let d = tmpdir("get");
        std::fs::write(d.join("f.bin"), b"hello world").unwrap();
        let (mut s, line) = http_respond(&d, b"GET /f.bin?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
        assert_eq!(line, "GET /f.bin?x=1 HTTP/1.1");
        let n = s.total().unwrap() as usize;
        let mut out = vec![0; n];
        s.fill(0, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.0 200 OK\r\n"), "{text}");
        assert!(text.contains("Content-Length: 11\r\n"));
        assert!(text.ends_with("\r\n\r\nhello world"));
        // A retransmission reads the same bytes from the middle.
        let mut mid = vec![0; 5];
        s.fill(n as u64 - 5, &mut mid).unwrap();
        assert_eq!(&mid, b"world");
        for (req, status) in [
            (&b"GET /../etc/passwd HTTP/1.1\r\n\r\n"[..], "400"),
            (b"GET /%2e%2e/x HTTP/1.0\r\n\r\n", "400"),
            (b"GET /nope HTTP/1.0\r\n\r\n", "404"),
            (b"GET / HTTP/1.0\r\n\r\n", "404"),
            (b"POST /f.bin HTTP/1.0\r\n\r\n", "405"),
            (b"GET /f.bin HTTP/2\r\n\r\n", "505"),
            (b"garbage\r\n\r\n", "400"),
        ] {
            let (mut s, _) = http_respond(&d, req);
            let mut out = vec![0; s.total().unwrap() as usize];
            s.fill(0, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.starts_with(&format!("HTTP/1.0 {status}")), "{text}");
        }
        let (s, _) = http_respond(&d, b"HEAD /f.bin HTTP/1.1\r\n\r\n");
        let head_len = s.head.len() as u64;
        assert_eq!(s.total(), Some(head_len), "HEAD: no body");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn the_server_waits_for_the_whole_head_across_segments() {
        let d = tmpdir("split");
        std::fs::write(d.join("a"), b"x").unwrap();
        let app = ServerApp::Http(d.clone());
        let mut c = ServerConn::new();
        assert!(c.on_data(&app, b"GET /a HTTP/1.1\r\nHo").is_none());
        assert!(c.on_data(&app, b"st: x\r\n").is_none());
        let s = c.on_data(&app, b"\r\n").expect("complete head");
        assert_eq!(s.total(), Some(s.head.len() as u64 + 1));
        assert!(
            c.on_data(&app, b"more").is_none(),
            "one response per connection"
        );
        assert_eq!(c.read, 32);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn the_client_saves_the_body_and_checks_its_length() {
        let d = tmpdir("client");
        let save = d.join("out");
        let (mut c, req) = HttpClient::new("/f", "10.0.0.1:80", &save).unwrap();
        assert!(String::from_utf8_lossy(&req.head).starts_with("GET /f HTTP/1.1\r\n"));
        c.on_data(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n");
        c.on_data(b"\r\nabc");
        assert!(!c.complete());
        c.on_data(b"def");
        assert!(c.complete());
        c.finish(true);
        assert_eq!(std::fs::read(&save).unwrap(), b"abcdef");
        assert!(c.error.is_none());
        // Short body, then the server closes: an error naming the count.
        let (mut c, _) = HttpClient::new("/f", "h", &save).unwrap();
        c.on_data(b"HTTP/1.0 200 OK\r\nContent-Length: 9\r\n\r\nabc");
        c.finish(true);
        assert_eq!(c.error.as_deref(), Some("3 of 9 body bytes arrived"));
        let (mut c, _) = HttpClient::new("/f", "h", &save).unwrap();
        c.on_data(b"HTTP/1.0 404 Not Found\r\n\r\n");
        assert_eq!(c.error.as_deref(), Some("status 404"));
        std::fs::remove_dir_all(d).unwrap();
    }
}
