//! For the tests: `candle`'s forward pass of the same model as [`crate::single`] (the
//! reference it is checked against), all-minilm-l6-v2 (6 layers, 384 wide, 12
//! heads) on `candle-core`/`candle-nn`, CPU only, in f32: embeddings, then per layer
//! self-attention and the feed-forward block, each followed by a residual and layer norm
//! (post-norm, as `transformers`' `BertModel`), then the sentence embedding as the model
//! card says: the mean of the last hidden states over the real tokens, L2-normalised.

use crate::BertConfig;
use candle_core::{DType, Device, Module, Tensor, D};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, VarBuilder};

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

pub struct Bert {
    words: Embedding,
    positions: Embedding,
    /// Token type 0's embedding (every sentence here is a single segment).
    segment: Tensor,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    device: Device,
}

impl Bert {
    pub fn load(vb: VarBuilder<'_>, cfg: &BertConfig) -> candle_core::Result<Self> {
        if cfg.hidden_act != "gelu" || !cfg.hidden_size.is_multiple_of(cfg.num_attention_heads) {
            return Err(candle_core::Error::Msg(format!(
                "unsupported BERT config: hidden_act {:?}, hidden_size {} over {} heads",
                cfg.hidden_act, cfg.hidden_size, cfg.num_attention_heads
            )));
        }
        let h = cfg.hidden_size;
        let e = vb.pp("embeddings");
        let words = embedding(cfg.vocab_size, h, e.pp("word_embeddings"))?;
        let positions = embedding(cfg.max_position_embeddings, h, e.pp("position_embeddings"))?;
        let segment = e
            .pp("token_type_embeddings")
            .get((2, h), "weight")?
            .get(0)?;
        let norm = layer_norm(h, cfg.layer_norm_eps, e.pp("LayerNorm"))?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            layers.push(Layer {
                query: linear(h, h, a.pp("self.query"))?,
                key: linear(h, h, a.pp("self.key"))?,
                value: linear(h, h, a.pp("self.value"))?,
                attention_out: linear(h, h, a.pp("output.dense"))?,
                attention_norm: layer_norm(h, cfg.layer_norm_eps, a.pp("output.LayerNorm"))?,
                intermediate: linear(h, cfg.intermediate_size, l.pp("intermediate.dense"))?,
                output: linear(cfg.intermediate_size, h, l.pp("output.dense"))?,
                output_norm: layer_norm(h, cfg.layer_norm_eps, l.pp("output.LayerNorm"))?,
            });
        }
        Ok(Self {
            words,
            positions,
            segment,
            norm,
            layers,
            heads: cfg.num_attention_heads,
            head_dim: h / cfg.num_attention_heads,
            device: vb.device().clone(),
        })
    }

    /// Sentence embeddings of a batch of token id sequences (each already framed by
    /// `[CLS]` … `[SEP]`, none empty), one L2-normalised row per sequence.
    pub fn embed(&self, batch: &[Vec<u32>]) -> candle_core::Result<Vec<Vec<f32>>> {
        let n = batch.len();
        let t = batch.iter().map(Vec::len).max().unwrap_or(0);
        if n == 0 || t == 0 {
            return Ok(Vec::new());
        }
        let mut ids = vec![0u32; n * t];
        let mut mask = vec![0f32; n * t];
        for (b, seq) in batch.iter().enumerate() {
            ids[b * t..b * t + seq.len()].copy_from_slice(seq);
            mask[b * t..b * t + seq.len()].fill(1.0);
        }
        let ids = Tensor::from_vec(ids, (n, t), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, t), &self.device)?;
        let pos = Tensor::arange(0u32, t as u32, &self.device)?;
        let x = self
            .words
            .forward(&ids)?
            .broadcast_add(&self.positions.forward(&pos)?)?
            .broadcast_add(&self.segment)?;
        let mut x = self.norm.forward(&x)?;
        // padding keys get a large negative score: (n, 1, 1, t)
        let bias = ((mask.clone() - 1.0)? * 1e4)?.reshape((n, 1, 1, t))?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        for l in &self.layers {
            let split = |y: Tensor| -> candle_core::Result<Tensor> {
                y.reshape((n, t, self.heads, self.head_dim))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let q = split(l.query.forward(&x)?)?;
            let k = split(l.key.forward(&x)?)?;
            let v = split(l.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(&bias)?;
            let p = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = p
                .matmul(&v)?
                .transpose(1, 2)?
                .reshape((n, t, self.heads * self.head_dim))?;
            let a = l
                .attention_norm
                .forward(&(l.attention_out.forward(&ctx)? + &x)?)?;
            let i = l.intermediate.forward(&a)?.gelu_erf()?;
            x = l.output_norm.forward(&(l.output.forward(&i)? + &a)?)?;
        }
        // mean over the real tokens, then unit length
        let m = mask.unsqueeze(2)?;
        let summed = x.broadcast_mul(&m)?.sum(1)?;
        let counts = m.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(D::Minus1)?
            .sqrt()?
            .clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norms)?.to_dtype(DType::F32)?.to_vec2()
    }
}
