//! The chat template inside a GGUF model file (`tokenizer.chat_template`, with the BOS and EOS
//! tokens' text), read from the metadata header alone: a llama.cpp user passes the model file
//! itself to `--chat-template`. The file is untrusted input: every length is bounded and a
//! malformed header is an error naming the file, never a panic or a huge allocation.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::{anyhow, bail, Context};

const MAGIC: &[u8; 4] = b"GGUF";
/// Longest key or string value read into memory (a chat template is a few KiB).
const MAX_STRING: u64 = 4 << 20;
/// Most metadata entries, and most array elements, believed.
const MAX_COUNT: u64 = 1 << 24;
const MAX_DEPTH: u32 = 4;

const TYPE_STRING: u32 = 8;
const TYPE_ARRAY: u32 = 9;

/// What a GGUF file says about its chat template.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufTemplate {
    pub template: String,
    pub bos_token: String,
    pub eos_token: String,
}

/// Whether `path` starts with the GGUF magic.
pub fn is_gguf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == MAGIC
}

struct Reader<R> {
    r: R,
}

impl<R: Read + Seek> Reader<R> {
    fn u32(&mut self) -> anyhow::Result<u32> {
        let mut b = [0u8; 4];
        self.r.read_exact(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> anyhow::Result<u64> {
        let mut b = [0u8; 8];
        self.r.read_exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn string(&mut self) -> anyhow::Result<String> {
        let len = self.u64()?;
        if len > MAX_STRING {
            bail!("a string of {len} bytes");
        }
        let mut b = vec![0u8; len as usize];
        self.r.read_exact(&mut b)?;
        Ok(String::from_utf8_lossy(&b).into_owned())
    }

    fn skip(&mut self, bytes: u64) -> anyhow::Result<()> {
        self.r.seek(SeekFrom::Current(
            i64::try_from(bytes).map_err(|_| anyhow!("a length of {bytes} bytes"))?,
        ))?;
        Ok(())
    }

    fn scalar_size(kind: u32) -> anyhow::Result<u64> {
        Ok(match kind {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            10..=12 => 8,
            other => bail!("unknown value type {other}"),
        })
    }

    /// Skip one value of `kind`.
    fn skip_value(&mut self, kind: u32, depth: u32) -> anyhow::Result<()> {
        match kind {
            TYPE_STRING => {
                let len = self.u64()?;
                self.skip(len)
            }
            TYPE_ARRAY => {
                if depth >= MAX_DEPTH {
                    bail!("arrays nested more than {MAX_DEPTH} deep");
                }
                let (item, count) = (self.u32()?, self.count()?);
                if item == TYPE_STRING || item == TYPE_ARRAY {
                    (0..count).try_for_each(|_| self.skip_value(item, depth + 1))
                } else {
                    self.skip(count * Self::scalar_size(item)?)
                }
            }
            scalar => self.skip(Self::scalar_size(scalar)?),
        }
    }

    fn count(&mut self) -> anyhow::Result<u64> {
        let n = self.u64()?;
        if n > MAX_COUNT {
            bail!("a count of {n}");
        }
        Ok(n)
    }

    /// An integer value of any integer type.
    fn integer(&mut self, kind: u32) -> anyhow::Result<Option<u64>> {
        Ok(match kind {
            0 | 1 => {
                let mut b = [0u8; 1];
                self.r.read_exact(&mut b)?;
                Some(u64::from(b[0]))
            }
            2 | 3 => {
                let mut b = [0u8; 2];
                self.r.read_exact(&mut b)?;
                Some(u64::from(u16::from_le_bytes(b)))
            }
            4 | 5 => Some(u64::from(self.u32()?)),
            10 | 11 => Some(self.u64()?),
            other => {
                self.skip_value(other, 0)?;
                None
            }
        })
    }
}

/// Read the chat template (and the BOS and EOS tokens' text) from the GGUF file at `path`.
pub fn read_template(path: &Path) -> anyhow::Result<GgufTemplate> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse(BufReader::new(file))
        .with_context(|| format!("{}: not a readable GGUF header", path.display()))?
        .ok_or_else(|| {
            anyhow!(
                "{}: the GGUF file has no tokenizer.chat_template",
                path.display()
            )
        })
}

fn parse<R: Read + Seek>(r: R) -> anyhow::Result<Option<GgufTemplate>> {
    let mut r = Reader { r };
    let mut magic = [0u8; 4];
    r.r.read_exact(&mut magic)?;
    if &magic != MAGIC {
        bail!("no GGUF magic");
    }
    let version = r.u32()?;
    if version < 2 {
        bail!("GGUF version {version} (only 2 and later are read)");
    }
    let _tensors = r.u64()?;
    let entries = r.count()?;
    let (mut template, mut tokens) = (None, Vec::new());
    let (mut bos, mut eos) = (None, None);
    for _ in 0..entries {
        let key = r.string()?;
        let kind = r.u32()?;
        match (key.as_str(), kind) {
            ("tokenizer.chat_template", TYPE_STRING) => template = Some(r.string()?),
            ("tokenizer.ggml.bos_token_id", k) => bos = r.integer(k)?,
            ("tokenizer.ggml.eos_token_id", k) => eos = r.integer(k)?,
            ("tokenizer.ggml.tokens", TYPE_ARRAY) => {
                let (item, count) = (r.u32()?, r.count()?);
                if item != TYPE_STRING {
                    bail!("tokenizer.ggml.tokens is not a list of strings");
                }
                tokens = (0..count)
                    .map(|_| r.string())
                    .collect::<anyhow::Result<_>>()?;
            }
            (_, k) => r.skip_value(k, 0)?,
        }
    }
    let token = |id: Option<u64>| {
        id.and_then(|i| tokens.get(usize::try_from(i).ok()?).cloned())
            .unwrap_or_default()
    };
    Ok(template.map(|template| GgufTemplate {
        template,
        bos_token: token(bos),
        eos_token: token(eos),
    }))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Cursor;

    use super::*;

    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }

    /// A GGUF v3 header with a few entries before and after the ones that matter.
    pub(crate) fn header(template: Option<&str>) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(0u64.to_le_bytes());
        let entries = 5 + u64::from(template.is_some());
        out.extend(entries.to_le_bytes());
        string(&mut out, "general.name");
        out.extend(TYPE_STRING.to_le_bytes());
        string(&mut out, "tiny");
        string(&mut out, "tokenizer.ggml.scores");
        out.extend(TYPE_ARRAY.to_le_bytes());
        out.extend(6u32.to_le_bytes());
        out.extend(3u64.to_le_bytes());
        out.extend([0u8; 12]);
        string(&mut out, "tokenizer.ggml.tokens");
        out.extend(TYPE_ARRAY.to_le_bytes());
        out.extend(TYPE_STRING.to_le_bytes());
        out.extend(3u64.to_le_bytes());
        for t in ["<unk>", "<|im_start|>", "<|im_end|>"] {
            string(&mut out, t);
        }
        string(&mut out, "tokenizer.ggml.bos_token_id");
        out.extend(4u32.to_le_bytes());
        out.extend(1u32.to_le_bytes());
        string(&mut out, "tokenizer.ggml.eos_token_id");
        out.extend(4u32.to_le_bytes());
        out.extend(2u32.to_le_bytes());
        if let Some(t) = template {
            string(&mut out, "tokenizer.chat_template");
            out.extend(TYPE_STRING.to_le_bytes());
            string(&mut out, t);
        }
        out
    }

    #[test]
    fn reads_the_template_and_special_tokens() {
        let got = parse(Cursor::new(header(Some("{{ bos_token }}x"))))
            .unwrap()
            .unwrap();
        assert_eq!(
            got,
            GgufTemplate {
                template: "{{ bos_token }}x".into(),
                bos_token: "<|im_start|>".into(),
                eos_token: "<|im_end|>".into(),
            }
        );
        assert_eq!(parse(Cursor::new(header(None))).unwrap(), None);
    }

    #[test]
    fn malformed_headers_are_errors_not_panics() {
        let full = header(Some("t"));
        for cut in [0, 3, 10, 30, full.len() - 1] {
            assert!(parse(Cursor::new(&full[..cut])).is_err(), "cut at {cut}");
        }
        let mut huge = full.clone();
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse(Cursor::new(huge)).is_err());
        let mut v1 = full;
        v1[4..8].copy_from_slice(&1u32.to_le_bytes());
        assert!(parse(Cursor::new(v1))
            .unwrap_err()
            .to_string()
            .contains("version 1"));
    }
}
