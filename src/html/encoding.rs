// TEMPORARY STUB, replaced by the real module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodingSource {
    Bom,
    Http,
    Meta,
    Utf8Valid,
    Detected,
    Default,
}
#[derive(Debug, Clone, Default)]
pub struct DecoderOptions {
    pub sniff_bytes: usize,
    pub http_charset: Option<String>,
}
pub struct StreamDecoder {
    buf: Vec<u8>,
}
impl StreamDecoder {
    pub fn new(_o: DecoderOptions) -> Self {
        StreamDecoder { buf: Vec::new() }
    }
    pub fn write(&mut self, bytes: &[u8], _out: &mut dyn FnMut(&str)) {
        self.buf.extend_from_slice(bytes)
    }
    pub fn end(&mut self, out: &mut dyn FnMut(&str)) {
        let s = String::from_utf8_lossy(&self.buf).into_owned();
        out(&s)
    }
    pub fn encoding(&self) -> Option<(&'static encoding_rs::Encoding, EncodingSource)> {
        Some((encoding_rs::UTF_8, EncodingSource::Default))
    }
}
