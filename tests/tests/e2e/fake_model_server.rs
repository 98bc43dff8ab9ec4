//! A tiny local model server for the e2e run (`tests/e2e`): it answers on 127.0.0.1 in the dialect
//! a harness speaks (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions, Gemini
//! generateContent) with one short canned reply, so that a harness run offline with a fake
//! API key gets through a whole turn and reaches its session end. A stepped server is
//! given a shell command: a prompt that names it is answered with a call of the harness's
//! shell tool running it instead, which is how the run gets a harness to show a permission
//! dialog; the call's result is answered with the text.
//!
//! Model calls are held at a gate until the e2e run lets them through: the harness's
//! session stays alive, and its record in the roster can be examined, for as long as that
//! takes. `start` holds every model call until the gate opens for good; `start_stepped`
//! holds only the calls of a conversation turn (those that offer tools: a harness's side
//! calls, titles or routing, pass) and lets them through one at a time.
//! Plain HTTP/1.1, one connection per request (`Connection: close`), std only.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};

/// The reply every model call gets, unless its prompt names the server's shell command.
pub const REPLY_TEXT: &str = "Hello from the roster e2e fake model";

/// The shell tools the fake model knows, by the name each harness gives its own: Claude
/// Code's and Copilot's and opencode's (`Bash`, `bash`), Codex's (`exec_command`, older
/// `shell_command` and `shell`), Gemini CLI's (`run_shell_command`).
const SHELL_TOOLS: [&str; 6] =
    ["Bash", "bash", "exec_command", "shell_command", "shell", "run_shell_command"];

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

/// Which model calls wait at the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holding {
    /// Every model call, until the gate opens for good.
    EveryModelCall,
    /// The calls of a conversation turn (they offer the harness's tools), until each is let
    /// through; other model calls are answered at once.
    TurnCalls,
}

struct Shared {
    api: ModelApi,
    holding: Holding,
    gate: Mutex<Gate>,
    gate_changed: Condvar,
    /// `METHOD path` of every request, in arrival order.
    requests: Mutex<Vec<String>>,
    /// What each answered model call got, in answer order: `text` or `<tool> call`.
    replies: Mutex<Vec<String>>,
    /// Every model call as it arrived (before any hold), with its body.
    model_calls: Mutex<Vec<ModelCall>>,
    /// The command a prompt naming it gets a shell tool call for.
    shell_command: Option<String>,
}

/// One model call as the server received it.
#[derive(Clone, Debug)]
pub struct ModelCall {
    /// `METHOD path`.
    pub request: String,
    /// The request body as sent (JSON text).
    pub body: String,
    /// Whether it is a call of a conversation turn (it offers the harness's tools), as
    /// opposed to a side call (a title, a routing decision).
    pub turn: bool,
}

/// A call of the harness's shell tool running a command.
#[derive(Clone, Copy)]
struct ShellCall<'a> {
    tool: &'a str,
    command: &'a str,
}

#[derive(Default)]
struct Gate {
    /// Everything passes from now on.
    open: bool,
    /// Calls let through one at a time, not yet taken by a call.
    passes: usize,
    /// Calls waiting at the gate now.
    waiting: usize,
}

impl FakeModelServer {
    /// Listens on an ephemeral port of 127.0.0.1 and serves `api` from a background thread
    /// for the rest of the process's life. The gate starts closed.
    pub fn start(api: ModelApi) -> anyhow::Result<FakeModelServer> {
        FakeModelServer::serve(api, Holding::EveryModelCall, None)
    }

    /// Like `start`, but holds only the calls of a conversation turn, each until
    /// `let_one_through` lets it pass; a prompt that names `shell_command` is answered
    /// with a call of the harness's shell tool running it.
    pub fn start_stepped(api: ModelApi, shell_command: &str) -> anyhow::Result<FakeModelServer> {
        FakeModelServer::serve(api, Holding::TurnCalls, Some(shell_command.to_owned()))
    }

    fn serve(
        api: ModelApi,
        holding: Holding,
        shell_command: Option<String>,
    ) -> anyhow::Result<FakeModelServer> {
        let listener = TcpListener::bind("127.0.0.1:0").context("binding the fake model server")?;
        let port = listener.local_addr().context("reading the fake model server's address")?.port();
        let shared = Arc::new(Shared {
            api,
            holding,
            gate: Mutex::new(Gate::default()),
            gate_changed: Condvar::new(),
            requests: Mutex::new(Vec::new()),
            replies: Mutex::new(Vec::new()),
            model_calls: Mutex::new(Vec::new()),
            shell_command,
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
        self.shared.gate.lock().expect("gate lock").open = true;
        self.shared.gate_changed.notify_all();
    }

    /// Lets one held call be answered, or the next one to come.
    pub fn let_one_through(&self) {
        self.shared.gate.lock().expect("gate lock").passes += 1;
        self.shared.gate_changed.notify_all();
    }

    /// How many model calls wait at the gate now.
    pub fn calls_waiting(&self) -> usize {
        self.shared.gate.lock().expect("gate lock").waiting
    }

    /// What each answered model call got, in answer order: `text` or `<tool> call`.
    pub fn replies(&self) -> Vec<String> {
        self.shared.replies.lock().expect("replies lock").clone()
    }

    /// Every model call so far, in arrival order, with its body: recorded as it arrives,
    /// so a call held at the gate is already here.
    pub fn model_calls(&self) -> Vec<ModelCall> {
        self.shared.model_calls.lock().expect("model calls lock").clone()
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
    let model_call = is_model_call(shared.api, &line) && request.header("upgrade").is_none();
    let conversation = Conversation::read(shared.api, &request);
    if model_call {
        shared.model_calls.lock().expect("model calls lock").push(ModelCall {
            request: line.clone(),
            body: String::from_utf8_lossy(&request.body).into_owned(),
            turn: !conversation.tools.is_empty(),
        });
    }
    let held = match shared.holding {
        Holding::EveryModelCall => model_call,
        Holding::TurnCalls => model_call && !conversation.tools.is_empty(),
    };
    if held {
        wait_for_gate(shared);
    }
    let shell_call = shared
        .shell_command
        .as_deref()
        .and_then(|command| conversation.shell_tool_wanted(command).map(|tool| ShellCall { tool, command }));
    if model_call {
        let reply = shell_call.map_or_else(|| "text".to_owned(), |call| format!("{} call", call.tool));
        shared.replies.lock().expect("replies lock").push(reply);
    }
    let response = respond(shared.api, &request, shell_call);
    write_response(stream, &response)
}

/// Waits until the gate is open or a pass is left, and takes the pass.
fn wait_for_gate(shared: &Shared) {
    let mut gate = shared.gate.lock().expect("gate lock");
    gate.waiting += 1;
    let (mut gate, _) = shared
        .gate_changed
        .wait_timeout_while(gate, LONGEST_HOLD, |gate| !gate.open && gate.passes == 0)
        .expect("gate lock");
    gate.waiting -= 1;
    if !gate.open && gate.passes > 0 {
        gate.passes -= 1;
    }
}

/// What a model call's request says about its conversation, in any dialect.
struct Conversation {
    /// The names of the tools the request offers the model.
    tools: Vec<String>,
    /// The last message or input item, as JSON text.
    last_message: String,
    /// Whether that last item is the result of a tool call.
    last_is_tool_result: bool,
}

impl Conversation {
    fn read(api: ModelApi, request: &Request) -> Conversation {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let list = |value: &Value| value.as_array().cloned().unwrap_or_default();
        let name = |tool: &Value| -> Option<String> {
            tool["name"].as_str().or(tool["function"]["name"].as_str()).map(str::to_owned)
        };
        let (tools, last): (Vec<String>, Value) = match api {
            ModelApi::AnthropicMessages => (
                list(&body["tools"]).iter().filter_map(name).collect(),
                list(&body["messages"]).last().cloned().unwrap_or_default(),
            ),
            ModelApi::OpenAiResponses => (
                list(&body["tools"]).iter().filter_map(name).collect(),
                list(&body["input"]).last().cloned().unwrap_or_default(),
            ),
            ModelApi::OpenAiChatCompletions => (
                list(&body["tools"]).iter().filter_map(name).collect(),
                list(&body["messages"]).last().cloned().unwrap_or_default(),
            ),
            ModelApi::GeminiGenerateContent => (
                list(&body["tools"])
                    .iter()
                    .flat_map(|tool| list(&tool["functionDeclarations"]))
                    .filter_map(|declaration| name(&declaration))
                    .collect(),
                list(&body["contents"]).last().cloned().unwrap_or_default(),
            ),
        };
        let last_is_tool_result = match api {
            ModelApi::AnthropicMessages => {
                list(&last["content"]).iter().any(|block| block["type"] == "tool_result")
            }
            ModelApi::OpenAiResponses => {
                last["type"].as_str().is_some_and(|kind| kind.ends_with("call_output"))
            }
            ModelApi::OpenAiChatCompletions => last["role"] == "tool",
            ModelApi::GeminiGenerateContent => {
                list(&last["parts"]).iter().any(|part| part.get("functionResponse").is_some())
            }
        };
        Conversation { tools, last_message: last.to_string(), last_is_tool_result }
    }

    /// The shell tool to call, when the prompt just sent names `command` and the request
    /// offers a shell tool.
    fn shell_tool_wanted(&self, command: &str) -> Option<&'static str> {
        if self.last_is_tool_result || !self.last_message.contains(command) {
            return None;
        }
        SHELL_TOOLS.into_iter().find(|shell| self.tools.iter().any(|tool| tool == shell))
    }
}

/// The arguments of `call`. Codex's `exec_command` asks to run outside its sandbox
/// (`require_escalated`), which is what its default approval policy (`on-request`) asks
/// the user about.
fn shell_arguments(call: ShellCall<'_>) -> Value {
    let command = call.command;
    match call.tool {
        "exec_command" => json!({
            "cmd": command, "sandbox_permissions": "require_escalated",
            "justification": "the roster e2e asks for approval"}),
        "shell_command" => json!({"command": command}),
        "shell" => json!({"command": ["bash", "-lc", command]}),
        _ => json!({"command": command, "description": "the roster e2e asks for approval"}),
    }
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

/// The answer to `request`; a model call gets `shell_call` when there is one.
fn respond(api: ModelApi, request: &Request, shell_call: Option<ShellCall<'_>>) -> Response {
    let path = request.path.split('?').next().unwrap_or(&request.path);
    // Codex tries a WebSocket first and falls back to plain HTTP when refused.
    if request.header("upgrade").is_some() {
        return Response::not_found();
    }
    match api {
        ModelApi::AnthropicMessages => anthropic_response(request, path, shell_call),
        ModelApi::OpenAiResponses => responses_response(request, path, shell_call),
        ModelApi::OpenAiChatCompletions => chat_completions_response(request, path, shell_call),
        ModelApi::GeminiGenerateContent => gemini_response(path, shell_call),
    }
}

fn anthropic_response(request: &Request, path: &str, shell_call: Option<ShellCall<'_>>) -> Response {
    if request.method == "POST" && path.ends_with("/messages/count_tokens") {
        return Response::json(json!({"input_tokens": 1}));
    }
    if !(request.method == "POST" && path.ends_with("/messages")) {
        return Response::not_found();
    }
    let usage = json!({"input_tokens": 1, "output_tokens": 1});
    let (content, stop_reason) = match shell_call {
        Some(call) => (
            json!({"type": "tool_use", "id": tool_call_id(), "name": call.tool, "input": shell_arguments(call)}),
            "tool_use",
        ),
        None => (json!({"type": "text", "text": REPLY_TEXT}), "end_turn"),
    };
    if !request.wants_stream() {
        return Response::json(json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
            "content": [content], "stop_reason": stop_reason, "stop_sequence": null, "usage": usage,
        }));
    }
    // A streamed block starts empty and gets its text, or its tool input, as one delta.
    let (empty_block, delta) = match shell_call {
        Some(_) => {
            let mut block = content.clone();
            block["input"] = json!({});
            let partial_json = content["input"].to_string();
            (block, json!({"type": "input_json_delta", "partial_json": partial_json}))
        }
        None => (json!({"type": "text", "text": ""}), json!({"type": "text_delta", "text": REPLY_TEXT})),
    };
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": empty_block}),
        ),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": delta})),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 1}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    Response::events(named_events(&events))
}

fn responses_response(request: &Request, path: &str, shell_call: Option<ShellCall<'_>>) -> Response {
    if request.method == "GET" && path.ends_with("/models") {
        return Response::json(json!({"models": [], "data": []}));
    }
    if !(request.method == "POST" && path.ends_with("/responses")) {
        return Response::not_found();
    }
    let item = match shell_call {
        Some(call) => json!({"type": "function_call", "id": "fc_fake", "call_id": tool_call_id(),
            "name": call.tool, "arguments": shell_arguments(call).to_string()}),
        None => json!({"type": "message", "role": "assistant", "id": "msg_fake",
            "content": [{"type": "output_text", "text": REPLY_TEXT}]}),
    };
    let events = [
        ("response.created", json!({"type": "response.created", "response": {"id": "resp_fake"}})),
        ("response.output_item.done", json!({"type": "response.output_item.done", "item": item})),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_fake", "usage": {
            "input_tokens": 1, "input_tokens_details": null, "output_tokens": 1,
            "output_tokens_details": null, "total_tokens": 2}}}),
        ),
    ];
    Response::events(named_events(&events))
}

fn chat_completions_response(request: &Request, path: &str, shell_call: Option<ShellCall<'_>>) -> Response {
    if request.method == "GET" && path.ends_with("/models") {
        return Response::json(
            json!({"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "roster"}]}),
        );
    }
    if !(request.method == "POST" && path.ends_with("/chat/completions")) {
        return Response::not_found();
    }
    let usage = json!({"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2});
    let tool_call = |call: ShellCall<'_>, index: Option<u32>| {
        let mut tool_call = json!({"id": tool_call_id(), "type": "function",
            "function": {"name": call.tool, "arguments": shell_arguments(call).to_string()}});
        if let Some(index) = index {
            tool_call["index"] = json!(index);
        }
        tool_call
    };
    let (message, finish_reason) = match shell_call {
        Some(call) => (
            json!({"role": "assistant", "content": null, "tool_calls": [tool_call(call, None)]}),
            "tool_calls",
        ),
        None => (json!({"role": "assistant", "content": REPLY_TEXT}), "stop"),
    };
    if !request.wants_stream() {
        return Response::json(json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
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
    let delta = match shell_call {
        Some(call) => json!({"role": "assistant", "tool_calls": [tool_call(call, Some(0))]}),
        None => json!({"role": "assistant", "content": REPLY_TEXT}),
    };
    let mut body = String::new();
    for data in [
        chunk(json!({"index": 0, "delta": delta, "finish_reason": null}), None),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": finish_reason}), Some(&usage)),
    ] {
        body.push_str(&format!("data: {data}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    Response::events(body)
}

fn gemini_response(path: &str, shell_call: Option<ShellCall<'_>>) -> Response {
    let usage = json!({"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2});
    if path.ends_with(":streamGenerateContent") {
        let part = match shell_call {
            Some(call) => json!({"functionCall": {"name": call.tool, "args": shell_arguments(call)}}),
            None => json!({"text": REPLY_TEXT}),
        };
        let data = json!({"candidates": [{"content": {"role": "model", "parts": [part]},
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

/// A tool call id no earlier call of the run had: harnesses key a call's approval and
/// result by it.
fn tool_call_id() -> String {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    format!("call_fake_{}", CALLS.fetch_add(1, Ordering::Relaxed))
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
