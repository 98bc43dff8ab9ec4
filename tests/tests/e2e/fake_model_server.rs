//! A tiny local model server for the e2e run (`tests/e2e`): it answers on 127.0.0.1 in the dialect
//! a harness speaks (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions, Gemini
//! generateContent) with one short canned reply, so that a harness run offline with a fake
//! API key gets through a whole turn and reaches its session end.
//!
//! Every model call is held at a gate until the e2e run opens it: the harness's session
//! stays alive, and its record in the roster can be examined, for as long as that takes.
//! Plain HTTP/1.1, one connection per request (`Connection: close`), std only.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};

/// The reply every model call gets.
const REPLY_TEXT: &str = "Hello from the roster e2e fake model";

/// The longest a model call is held before it is answered anyway, so that a forgotten gate
/// cannot keep a harness (and this process) alive forever.
const LONGEST_HOLD: Duration = Duration::from_secs(600);

/// How long a connection may sit idle while its request is read.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The request headers roster's fake accepts, at most.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The request bodies the fake accepts, at most (prompts carry whole system prompts and
/// tool schemas).
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The model API a harness speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelApi {
    /// Claude Code: `POST /v1/messages` (streamed), `/v1/messages/count_tokens`.
    AnthropicMessages,
    /// Codex: `POST /v1/responses` (server-sent events); its WebSocket attempt is refused.
    OpenAiResponses,
    /// Copilot CLI with a custom provider: `POST /v1/chat/completions`, `GET /v1/models`.
    OpenAiChatCompletions,
    /// Gemini CLI: `…:streamGenerateContent`, `…:generateContent`, `…:countTokens`.
    GeminiGenerateContent,
}

/// A running fake model server.
pub struct FakeModelServer {
    pub port: u16,
    shared: Arc<Shared>,
}

struct Shared {
    api: ModelApi,
    gate_open: Mutex<bool>,
    gate_changed: Condvar,
    /// `METHOD path` of every request, in arrival order.
    requests: Mutex<Vec<String>>,
}

impl FakeModelServer {
    /// Listens on an ephemeral port of 127.0.0.1 and serves `api` from a background thread
    /// for the rest of the process's life. The gate starts closed.
    pub fn start(api: ModelApi) -> anyhow::Result<FakeModelServer> {
        let listener = TcpListener::bind("127.0.0.1:0").context("binding the fake model server")?;
        let port = listener.local_addr().context("reading the fake model server's address")?.port();
        let shared = Arc::new(Shared {
            api,
            gate_open: Mutex::new(false),
            gate_changed: Condvar::new(),
            requests: Mutex::new(Vec::new()),
        });
        let serving = Arc::clone(&shared);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let connection = Arc::clone(&serving);
                std::thread::spawn(move || {
                    // A harness that hangs up mid-request is no concern of the e2e run.
                    let _ = serve_connection(&connection, stream);
                });
            }
        });
        Ok(FakeModelServer { port, shared })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Lets every held and future model call be answered.
    pub fn open_gate(&self) {
        *self.shared.gate_open.lock().expect("gate lock") = true;
        self.shared.gate_changed.notify_all();
    }

    /// `METHOD path` of every request so far.
    pub fn requests(&self) -> Vec<String> {
        self.shared.requests.lock().expect("requests lock").clone()
    }

    /// How many model calls (as opposed to listings, token counts, refused upgrades) came in.
    pub fn model_call_count(&self) -> usize {
        self.requests().iter().filter(|request| is_model_call(self.shared.api, request)).count()
    }
}

/// One parsed request.
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    fn wants_stream(&self) -> bool {
        serde_json::from_slice::<Value>(&self.body)
            .ok()
            .and_then(|body| body.get("stream").and_then(Value::as_bool))
            .unwrap_or(false)
    }
}

/// A response to write.
struct Response {
    status: &'static str,
    content_type: &'static str,
    body: String,
}

impl Response {
    fn json(body: Value) -> Response {
        Response { status: "200 OK", content_type: "application/json", body: body.to_string() }
    }

    fn events(body: String) -> Response {
        Response { status: "200 OK", content_type: "text/event-stream", body }
    }

    fn not_found() -> Response {
        Response { status: "404 Not Found", content_type: "application/json", body: "{}".to_owned() }
    }
}

fn serve_connection(shared: &Shared, stream: TcpStream) -> anyhow::Result<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let request = read_request(&mut reader)?;
    let line = format!("{} {}", request.method, request.path);
    shared.requests.lock().expect("requests lock").push(line.clone());
    if is_model_call(shared.api, &line) && request.header("upgrade").is_none() {
        wait_for_gate(shared);
    }
    let response = respond(shared.api, &request);
    write_response(stream, &response)
}

fn wait_for_gate(shared: &Shared) {
    let open = shared.gate_open.lock().expect("gate lock");
    let _ = shared.gate_changed.wait_timeout_while(open, LONGEST_HOLD, |open| !*open);
}

/// Whether `METHOD path` is a call for a model's reply in `api`.
fn is_model_call(api: ModelApi, request: &str) -> bool {
    let Some((method, path)) = request.split_once(' ') else { return false };
    let path = path.split('?').next().unwrap_or(path);
    match api {
        ModelApi::AnthropicMessages => method == "POST" && path.ends_with("/messages"),
        ModelApi::OpenAiResponses => method == "POST" && path.ends_with("/responses"),
        ModelApi::OpenAiChatCompletions => method == "POST" && path.ends_with("/chat/completions"),
        ModelApi::GeminiGenerateContent => {
            method == "POST"
                && (path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent"))
        }
    }
}

fn respond(api: ModelApi, request: &Request) -> Response {
    let path = request.path.split('?').next().unwrap_or(&request.path);
    // Codex tries a WebSocket first and falls back to plain HTTP when refused.
    if request.header("upgrade").is_some() {
        return Response::not_found();
    }
    match api {
        ModelApi::AnthropicMessages => anthropic_response(request, path),
        ModelApi::OpenAiResponses => responses_response(request, path),
        ModelApi::OpenAiChatCompletions => chat_completions_response(request, path),
        ModelApi::GeminiGenerateContent => gemini_response(path),
    }
}

fn anthropic_response(request: &Request, path: &str) -> Response {
    if request.method == "POST" && path.ends_with("/messages/count_tokens") {
        return Response::json(json!({"input_tokens": 1}));
    }
    if !(request.method == "POST" && path.ends_with("/messages")) {
        return Response::not_found();
    }
    let usage = json!({"input_tokens": 1, "output_tokens": 1});
    if !request.wants_stream() {
        return Response::json(json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
            "content": [{"type": "text", "text": REPLY_TEXT}],
            "stop_reason": "end_turn", "stop_sequence": null, "usage": usage,
        }));
    }
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": REPLY_TEXT}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 1}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    Response::events(named_events(&events))
}

fn responses_response(request: &Request, path: &str) -> Response {
    if request.method == "GET" && path.ends_with("/models") {
        return Response::json(json!({"models": [], "data": []}));
    }
    if !(request.method == "POST" && path.ends_with("/responses")) {
        return Response::not_found();
    }
    let events = [
        ("response.created", json!({"type": "response.created", "response": {"id": "resp_fake"}})),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "item": {
            "type": "message", "role": "assistant", "id": "msg_fake",
            "content": [{"type": "output_text", "text": REPLY_TEXT}]}}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_fake", "usage": {
            "input_tokens": 1, "input_tokens_details": null, "output_tokens": 1,
            "output_tokens_details": null, "total_tokens": 2}}}),
        ),
    ];
    Response::events(named_events(&events))
}

fn chat_completions_response(request: &Request, path: &str) -> Response {
    if request.method == "GET" && path.ends_with("/models") {
        return Response::json(
            json!({"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "roster"}]}),
        );
    }
    if !(request.method == "POST" && path.ends_with("/chat/completions")) {
        return Response::not_found();
    }
    let usage = json!({"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2});
    if !request.wants_stream() {
        return Response::json(json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY_TEXT}, "finish_reason": "stop"}],
            "usage": usage,
        }));
    }
    let chunk = |choice: Value, usage: Option<&Value>| {
        let mut chunk = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
            "model": "fake-model", "choices": [choice]});
        if let Some(usage) = usage {
            chunk["usage"] = usage.clone();
        }
        chunk
    };
    let mut body = String::new();
    for data in [
        chunk(
            json!({"index": 0, "delta": {"role": "assistant", "content": REPLY_TEXT}, "finish_reason": null}),
            None,
        ),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": "stop"}), Some(&usage)),
    ] {
        body.push_str(&format!("data: {data}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    Response::events(body)
}

fn gemini_response(path: &str) -> Response {
    let usage = json!({"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2});
    if path.ends_with(":streamGenerateContent") {
        let data = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": REPLY_TEXT}]},
            "finishReason": "STOP", "index": 0}], "usageMetadata": usage});
        return Response::events(format!("data: {data}\r\n\r\n"));
    }
    if path.ends_with(":generateContent") {
        // Gemini CLI's model router asks a small model to rate the prompt and expects JSON
        // text back; a simple one keeps it on the default model.
        let routing = json!({"complexity_reasoning": "a greeting", "complexity_score": 5}).to_string();
        return Response::json(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": routing}]},
            "finishReason": "STOP", "index": 0}], "usageMetadata": usage}),
        );
    }
    if path.ends_with(":countTokens") {
        return Response::json(json!({"totalTokens": 1}));
    }
    Response::not_found()
}

fn named_events(events: &[(&str, Value)]) -> String {
    events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
}

fn read_request(reader: &mut BufReader<TcpStream>) -> anyhow::Result<Request> {
    let mut header_bytes = 0;
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut words = request_line.split_whitespace();
    let (Some(method), Some(path)) = (words.next(), words.next()) else {
        anyhow::bail!("not an HTTP request: {request_line:?}");
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            anyhow::bail!("connection closed inside the headers");
        }
        header_bytes += line.len();
        anyhow::ensure!(header_bytes <= MAX_HEADER_BYTES, "request headers over {MAX_HEADER_BYTES} bytes");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let mut request = Request { method, path, headers, body: Vec::new() };
    let chunked =
        request.header("transfer-encoding").is_some_and(|value| value.eq_ignore_ascii_case("chunked"));
    if chunked {
        request.body = read_chunked_body(reader)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length.parse().context("content-length")?;
        anyhow::ensure!(length <= MAX_BODY_BYTES, "request body over {MAX_BODY_BYTES} bytes");
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        request.body = body;
    }
    Ok(request)
}

fn read_chunked_body(reader: &mut BufReader<TcpStream>) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line)?;
        let size_text = size_line.trim().split(';').next().unwrap_or("");
        let size =
            usize::from_str_radix(size_text, 16).with_context(|| format!("chunk size {size_text:?}"))?;
        if size == 0 {
            // Trailers, then the blank line that ends the body.
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        anyhow::ensure!(body.len() + size <= MAX_BODY_BYTES, "request body over {MAX_BODY_BYTES} bytes");
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
    }
}

fn write_response(mut stream: TcpStream, response: &Response) -> anyhow::Result<()> {
    let head = format!(
        "HTTP/1.1 {}\r\ncontent-type: {}\r\ncontent-length: {}\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
        response.status,
        response.content_type,
        response.body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(response.body.as_bytes())?;
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Both)?;
    Ok(())
}
