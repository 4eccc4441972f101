//! The chat template a chat prompt is rendered with before teacher forcing: a Hugging Face style
//! Jinja template (a `.jinja` file, or the `chat_template` of a `tokenizer_config.json`), run by
//! minijinja with Python string methods and a fuel limit, since a template is user input.

use std::path::Path;

use anyhow::{anyhow, Context};
use minijinja::{context, Environment, Error, ErrorKind, Value};
use serde_json::Value as Json;

use crate::catalogue::Message;

/// Template instructions allowed per render: far beyond any real chat template, and a bound on
/// a runaway loop.
const FUEL: u64 = 2_000_000;

/// A loaded chat template, with the special tokens it may refer to.
#[derive(Debug, Clone)]
pub struct ChatTemplate {
    pub source: String,
    pub bos_token: String,
    pub eos_token: String,
}

/// A special token as `tokenizer_config.json` spells it: a string, or `{"content": ...}`.
fn token(v: Option<&Json>) -> String {
    match v {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Object(o)) => o
            .get("content")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .into(),
        _ => String::new(),
    }
}

impl ChatTemplate {
    /// Read `path`: a GGUF model file (its `tokenizer.chat_template`), JSON (a
    /// `tokenizer_config.json`, whose `chat_template` is a string or a list of `{name, template}`
    /// of which `default` is used), or else the template text itself.
    pub fn load(path: &Path) -> anyhow::Result<ChatTemplate> {
        let t = if super::gguf::is_gguf(path) {
            let g =
                super::gguf::read_template(path).map_err(|e| anyhow!("--chat-template {e:#}"))?;
            ChatTemplate {
                source: g.template,
                bos_token: g.bos_token,
                eos_token: g.eos_token,
            }
        } else {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--chat-template {}: cannot read it", path.display()))?;
            Self::parse(&text, path)?
        };
        t.render(&[]).map(|_| ()).or_else(|e| {
            // A template may refuse an empty conversation; only a syntax error is fatal here.
            if e.contains("syntax error") {
                Err(anyhow!("--chat-template {}: {e}", path.display()))
            } else {
                Ok(())
            }
        })?;
        Ok(t)
    }

    fn parse(text: &str, path: &Path) -> anyhow::Result<ChatTemplate> {
        if !text.trim_start().starts_with('{') || text.trim_start().starts_with("{%") {
            return Ok(ChatTemplate {
                source: text.to_string(),
                bos_token: String::new(),
                eos_token: String::new(),
            });
        }
        let json: Json = serde_json::from_str(text).with_context(|| {
            format!(
                "--chat-template {}: starts like JSON but does not parse as JSON",
                path.display()
            )
        })?;
        let source = match json.get("chat_template") {
            Some(Json::String(s)) => s.clone(),
            Some(Json::Array(list)) => list
                .iter()
                .find(|t| t.get("name").and_then(Json::as_str) == Some("default"))
                .or_else(|| list.first())
                .and_then(|t| t.get("template"))
                .and_then(Json::as_str)
                .ok_or_else(|| {
                    anyhow!(
                        "--chat-template {}: chat_template lists no template",
                        path.display()
                    )
                })?
                .to_string(),
            _ => {
                return Err(anyhow!(
                    "--chat-template {}: a JSON file needs a `chat_template` string (as in tokenizer_config.json)",
                    path.display()
                ))
            }
        };
        Ok(ChatTemplate {
            source,
            bos_token: token(json.get("bos_token")),
            eos_token: token(json.get("eos_token")),
        })
    }

    /// The prompt text a server would build for `messages`, ending with the generation prompt.
    pub fn render(&self, messages: &[Message]) -> Result<String, String> {
        let mut env = Environment::new();
        // As Hugging Face's apply_chat_template (and llama-cpp-python) configure Jinja.
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_fuel(Some(FUEL));
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |m: String| -> Result<Value, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, m))
        });
        env.add_function("strftime_now", |_f: String| -> Result<Value, Error> {
            Err(Error::new(
                ErrorKind::InvalidOperation,
                "strftime_now: a template that prints the date cannot be reproduced",
            ))
        });
        env.add_template("chat", &self.source)
            .map_err(|e| format!("{e:#}"))?;
        let tmpl = env.get_template("chat").map_err(|e| format!("{e:#}"))?;
        tmpl.render(context! {
            messages => Value::from_serialize(messages),
            add_generation_prompt => true,
            bos_token => &self.bos_token,
            eos_token => &self.eos_token,
        })
        .map_err(|e| format!("{e:#}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Role;

    const CHATML: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are helpful<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'].strip() + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

    fn user(text: &str) -> Vec<Message> {
        vec![Message {
            role: Role::User,
            content: text.into(),
        }]
    }

    fn load(dir: &Path, name: &str, text: &str) -> anyhow::Result<ChatTemplate> {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        ChatTemplate::load(&p)
    }

    #[test]
    fn renders_a_jinja_file_with_python_string_methods() {
        let dir = tempfile::tempdir().unwrap();
        let t = load(dir.path(), "t.jinja", CHATML).unwrap();
        assert_eq!(
            t.render(&user("  Hi?  ")).unwrap(),
            "<|im_start|>system\nYou are helpful<|im_end|>\n<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn reads_tokenizer_config_json_with_its_special_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let config = serde_json::json!({
            "bos_token": {"content": "<s>"},
            "eos_token": "</s>",
            "chat_template": [{"name": "tool_use", "template": "x"},
                              {"name": "default", "template": "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}"}],
        });
        let t = load(dir.path(), "tokenizer_config.json", &config.to_string()).unwrap();
        assert_eq!(t.render(&user("Hi")).unwrap(), "<s>[user]Hi</s>");
    }

    #[test]
    fn reads_the_template_inside_a_gguf_model_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("model.gguf");
        std::fs::write(
            &p,
            crate::logprobs::gguf::tests::header(Some("{{ bos_token }}{{ messages[0].content }}")),
        )
        .unwrap();
        let t = ChatTemplate::load(&p).unwrap();
        assert_eq!(t.render(&user("Hi")).unwrap(), "<|im_start|>Hi");
        std::fs::write(&p, crate::logprobs::gguf::tests::header(None)).unwrap();
        let e = ChatTemplate::load(&p).unwrap_err().to_string();
        assert!(
            e.contains("model.gguf") && e.contains("no tokenizer.chat_template"),
            "{e}"
        );
    }

    #[test]
    fn bad_templates_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = load(dir.path(), "bad.jinja", "{% for %}").unwrap_err();
        assert!(e.to_string().contains("bad.jinja"), "{e}");
        let e = load(dir.path(), "c.json", "{\"eos_token\": \"x\"}").unwrap_err();
        assert!(e.to_string().contains("chat_template"), "{e}");
        let e = ChatTemplate::load(&dir.path().join("missing.jinja")).unwrap_err();
        assert!(e.to_string().contains("missing.jinja"), "{e}");
    }

    #[test]
    fn raise_exception_and_runaway_loops_are_errors_not_hangs() {
        let dir = tempfile::tempdir().unwrap();
        let t = load(
            dir.path(),
            "r.jinja",
            "{% if messages[0].role == 'user' %}{{ raise_exception('no users') }}{% endif %}",
        )
        .unwrap();
        assert!(t.render(&user("x")).unwrap_err().contains("no users"));
        let t = load(
            dir.path(),
            "l.jinja",
            "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
        )
        .unwrap();
        assert!(t.render(&user("x")).is_err());
    }
}
