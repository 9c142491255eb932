//! HTML input: encodings, the tag vocabulary, character references and the streaming
//! tokenizer that turns page bytes into tags, words and symbols. Nothing here scores or
//! extracts; see [`crate::scoring`] and [`crate::extract`].

pub mod attrs;
pub mod encoding;
pub mod entities;
pub mod lexer;
pub mod normalize;
pub mod stem;
pub mod tags;
pub mod tokenizer;

pub use tokenizer::{Space, Token, TokenKind, TokenSink, TokenizeError, Tokenizer, TokenizerOptions, tokenize};
