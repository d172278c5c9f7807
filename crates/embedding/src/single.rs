//! The same forward pass as [`super::bert`], for one sequence at a time, in plain Rust:
//! a query is a dozen tokens, where a general matrix product spends most of its time
//! packing weights it then uses a dozen times. Here each weight row is read once per
//! call and used for every token while it is in the first-level cache; the inner loops
//! are compiled for AVX2 and FMA when the CPU has them (`pulp` dispatches, no `unsafe`
//! here) and run portably otherwise. Wide products split their outputs over two rayon
//! tasks. [`super::bert`] is the reference its tests compare with.

use candle_core::{DType, Tensor};
use candle_nn::VarBuilder;

use super::bert::BertConfig;

/// Lanes of the inner loops (one AVX2 register of f32): a layer's width is a multiple.
const LANES: usize = 8;
/// Products with more multiply-adds than this split their outputs over two tasks.
const SPLIT_WORK: usize = 1 << 20;

/// A linear layer: `y = x·Wᵀ + b`, `W` kept row-major as `[out][inp]` in f32, the model's
/// own values (8-bit weights were tried: 15 % faster, but a query's vector then drifts to
/// cosine 0.998 of the batch pass's, which made the tools' vectors).
struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    inp: usize,
    out: usize,
}

struct Norm {
    gain: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

struct Layer {
    /// Query, key and value projections stacked: `3·h` outputs.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

pub struct Single {
    words: Vec<f32>,
    positions: Vec<f32>,
    segment: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    vocab: usize,
    max_positions: usize,
}

fn flat(t: Tensor) -> candle_core::Result<Vec<f32>> {
    t.to_dtype(DType::F32)?.flatten_all()?.to_vec1()
}

fn dense(vbs: &[VarBuilder<'_>], inp: usize, out: usize) -> candle_core::Result<Dense> {
    if !inp.is_multiple_of(LANES) {
        return Err(candle_core::Error::Msg(format!(
            "a layer {inp} wide is not a multiple of {LANES}"
        )));
    }
    let mut w = Vec::with_capacity(vbs.len() * out * inp);
    let mut b = Vec::with_capacity(vbs.len() * out);
    for vb in vbs {
        w.extend(flat(vb.get((out, inp), "weight")?)?);
        b.extend(flat(vb.get(out, "bias")?)?);
    }
    Ok(Dense {
        w,
        b,
        inp,
        out: out * vbs.len(),
    })
}

fn norm(vb: VarBuilder<'_>, h: usize, eps: f64) -> candle_core::Result<Norm> {
    Ok(Norm {
        gain: flat(vb.get(h, "weight")?)?,
        bias: flat(vb.get(h, "bias")?)?,
        eps: eps as f32,
    })
}

impl Single {
    /// The weights of [`super::bert::Bert::load`]'s model, copied into this layout.
    pub fn load(vb: &VarBuilder<'_>, cfg: &BertConfig) -> candle_core::Result<Self> {
        let h = cfg.hidden_size;
        let e = vb.pp("embeddings");
        let words = flat(e.pp("word_embeddings").get((cfg.vocab_size, h), "weight")?)?;
        let positions = flat(
            e.pp("position_embeddings")
                .get((cfg.max_position_embeddings, h), "weight")?,
        )?;
        let segment = flat(
            e.pp("token_type_embeddings")
                .get((2, h), "weight")?
                .get(0)?,
        )?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            let qkv = [a.pp("self.query"), a.pp("self.key"), a.pp("self.value")];
            layers.push(Layer {
                qkv: dense(&qkv, h, h)?,
                attention_out: dense(&[a.pp("output.dense")], h, h)?,
                attention_norm: norm(a.pp("output.LayerNorm"), h, cfg.layer_norm_eps)?,
                intermediate: dense(&[l.pp("intermediate.dense")], h, cfg.intermediate_size)?,
                output: dense(&[l.pp("output.dense")], cfg.intermediate_size, h)?,
                output_norm: norm(l.pp("output.LayerNorm"), h, cfg.layer_norm_eps)?,
            });
        }
        Ok(Self {
            words,
            positions,
            segment,
            norm: norm(e.pp("LayerNorm"), h, cfg.layer_norm_eps)?,
            layers,
            hidden: h,
            heads: cfg.num_attention_heads,
            vocab: cfg.vocab_size,
            max_positions: cfg.max_position_embeddings,
        })
    }

    /// The sentence embedding of one token id sequence (framed by `[CLS]` … `[SEP]`):
    /// the mean of the last hidden states, unit length. `None` for an empty sequence, one
    /// longer than the model's positions or an id outside its vocabulary.
    pub fn embed(&self, ids: &[u32]) -> Option<Vec<f32>> {
        let (n, h) = (ids.len(), self.hidden);
        if n == 0 || n > self.max_positions || ids.iter().any(|&i| i as usize >= self.vocab) {
            return None;
        }
        let mut x = vec![0f32; n * h];
        for (t, (&id, row)) in ids.iter().zip(x.chunks_exact_mut(h)).enumerate() {
            let word = &self.words[id as usize * h..][..h];
            let pos = &self.positions[t * h..][..h];
            for (((v, w), p), s) in row.iter_mut().zip(word).zip(pos).zip(&self.segment) {
                *v = w + p + s;
            }
        }
        layer_norm(&mut x, &self.norm);
        let mut qkv = Vec::new();
        let mut ctx = vec![0f32; n * h];
        let mut a = Vec::new();
        let mut inter = Vec::new();
        for l in &self.layers {
            linear(&x, n, &l.qkv, &mut qkv);
            attention(&qkv, n, h, self.heads, &mut ctx);
            linear(&ctx, n, &l.attention_out, &mut a);
            add(&mut a, &x);
            layer_norm(&mut a, &l.attention_norm);
            linear(&a, n, &l.intermediate, &mut inter);
            inter.iter_mut().for_each(|v| *v = gelu(*v));
            linear(&inter, n, &l.output, &mut x);
            add(&mut x, &a);
            layer_norm(&mut x, &l.output_norm);
        }
        let mut mean = vec![0f32; h];
        for row in x.chunks_exact(h) {
            add(&mut mean, row);
        }
        let len = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
        mean.iter_mut().for_each(|v| *v /= len);
        Some(mean)
    }
}

fn add(y: &mut [f32], x: &[f32]) {
    y.iter_mut().zip(x).for_each(|(a, b)| *a += b);
}

fn layer_norm(x: &mut [f32], n: &Norm) {
    let h = n.gain.len();
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + n.eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&n.gain).zip(&n.bias) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// GELU with the error function, as `transformers`' `"gelu"`.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// Multi-head self-attention over every token (one sequence has no padding): `qkv` holds
/// per token its query, key and value (each `h` wide, `heads` heads of `h / heads`).
fn attention(qkv: &[f32], n: usize, h: usize, heads: usize, ctx: &mut [f32]) {
    let d = h / heads;
    let scale = 1.0 / (d as f32).sqrt();
    let mut p = vec![0f32; n];
    for head in 0..heads {
        let off = head * d;
        for i in 0..n {
            let q = &qkv[i * 3 * h + off..][..d];
            for (j, s) in p.iter_mut().enumerate() {
                let k = &qkv[j * 3 * h + h + off..][..d];
                *s = q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale;
            }
            let max = p.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut total = 0.0;
            p.iter_mut().for_each(|s| {
                *s = (*s - max).exp();
                total += *s;
            });
            let out = &mut ctx[i * h + off..][..d];
            out.fill(0.0);
            for (j, s) in p.iter().enumerate() {
                let v = &qkv[j * 3 * h + 2 * h + off..][..d];
                out.iter_mut().zip(v).for_each(|(o, v)| *o += s / total * v);
            }
        }
    }
}

/// `y = x·Wᵀ + b` for `n` rows of `x`; `y` is resized to `n × d.out`.
fn linear(x: &[f32], n: usize, d: &Dense, y: &mut Vec<f32>) {
    let inp = d.inp;
    // outputs first (`yt[j][i]`), so halves of the outputs are disjoint slices
    let mut yt = vec![0f32; n * d.out];
    let rows = |lo: usize, out: &mut [f32]| {
        let outs = out.len() / n;
        let w = &d.w[lo * inp..][..outs * inp];
        pulp::Arch::new().dispatch(Products { x, n, inp, w, out });
    };
    if n * d.out * inp > SPLIT_WORK && d.out.is_multiple_of(2 * COLS) {
        let half = d.out / 2;
        let (a, b) = yt.split_at_mut(half * n);
        rayon::join(|| rows(0, a), || rows(half, b));
    } else {
        rows(0, &mut yt);
    }
    y.clear();
    y.resize(n * d.out, 0.0);
    for (i, row) in y.chunks_exact_mut(d.out).enumerate() {
        for (j, (v, b)) in row.iter_mut().zip(&d.b).enumerate() {
            *v = yt[j * n + i] + b;
        }
    }
}

/// `out[j·n + i] = x_i · w_j` for every token `i` and weight row `w_j` (`inp` wide), in
/// blocks of [`COLS`] weight rows by [`ROWS`] tokens: each weight row is read from memory
/// once and used for every token while it is in the first-level cache; a block's sums are
/// independent, so the multiply-adds do not wait on each other.
struct Products<'a> {
    x: &'a [f32],
    n: usize,
    inp: usize,
    w: &'a [f32],
    out: &'a mut [f32],
}

const ROWS: usize = 4;
const COLS: usize = 2;

impl pulp::WithSimd for Products<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        let Products { x, n, inp, w, out } = self;
        let token = |i: usize| lanes::<S>(&x[i * inp..][..inp]);
        let row = |j: usize| lanes::<S>(&w[j * inp..][..inp]);
        let outs = out.len() / n;
        let mut j = 0;
        while j + COLS <= outs {
            let ws: [_; COLS] = std::array::from_fn(|c| row(j + c));
            let mut i = 0;
            while i + ROWS <= n {
                let sums = block(
                    simd,
                    std::array::from_fn::<_, ROWS, _>(|r| token(i + r)),
                    ws,
                );
                for (r, row) in sums.iter().enumerate() {
                    for (c, v) in row.iter().enumerate() {
                        out[(j + c) * n + i + r] = *v;
                    }
                }
                i += ROWS;
            }
            for i in i..n {
                let [row] = block(simd, [token(i)], ws);
                for (c, v) in row.iter().enumerate() {
                    out[(j + c) * n + i] = *v;
                }
            }
            j += COLS;
        }
        for j in j..outs {
            for i in 0..n {
                out[j * n + i] = block(simd, [token(i)], [row(j)])[0][0];
            }
        }
    }
}

#[inline(always)]
fn lanes<S: pulp::Simd>(v: &[f32]) -> &[S::f32s] {
    S::as_simd_f32s(v).0
}

/// `[[x_r · w_c]]` for `R` tokens and `C` weight rows, all as long as `w[0]`.
#[inline(always)]
fn block<S: pulp::Simd, const R: usize, const C: usize>(
    simd: S,
    x: [&[S::f32s]; R],
    w: [&[S::f32s]; C],
) -> [[f32; C]; R] {
    let len = w[0].len();
    let x = x.map(|v| &v[..len]);
    let w = w.map(|v| &v[..len]);
    let mut acc = [[simd.splat_f32s(0.0); C]; R];
    for k in 0..len {
        for c in 0..C {
            let wv = w[c][k];
            for r in 0..R {
                acc[r][c] = simd.mul_add_f32s(x[r][k], wv, acc[r][c]);
            }
        }
    }
    acc.map(|row| row.map(|v| simd.reduce_sum_f32s(v)))
}
