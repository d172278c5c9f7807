//! The same forward pass as [`super::bert`], for one sequence at a time, in plain Rust:
//! a query is a dozen tokens, where a general matrix product spends most of its time
//! packing weights it then uses a dozen times. Here the weights are packed once, at load,
//! and each block of them is read once per call and used for every token while it is in
//! the first-level cache; the inner loops
//! are compiled for AVX2 and FMA when the CPU has them (`pulp` dispatches, no `unsafe`
//! here) and run portably otherwise. Wide products split their outputs over two rayon
//! tasks. [`super::bert`] is the reference its tests compare with.

use candle_core::{DType, Tensor};
use candle_nn::VarBuilder;

use super::bert::BertConfig;

/// Products with more multiply-adds than this split their outputs over two tasks.
const SPLIT_WORK: usize = 1 << 20;

/// A linear layer: `y = x·Wᵀ + b`, in f32, the model's own values (8-bit weights were
/// tried: 15 % faster, but a query's vector then drifts to cosine 0.998 of the batch
/// pass's, which made the tools' vectors). `W` is packed for [`Products`]: for each
/// [`BLOCK`] outputs in turn, every input's weights to those outputs side by side
/// (`[out / BLOCK][inp][BLOCK]`), so a block's weights are read in order, once per call.
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
    let total = out * vbs.len();
    if !total.is_multiple_of(2 * BLOCK) {
        return Err(candle_core::Error::Msg(format!(
            "a layer of {total} outputs is not a multiple of {}",
            2 * BLOCK
        )));
    }
    let mut rows = Vec::with_capacity(total * inp);
    let mut b = Vec::with_capacity(total);
    for vb in vbs {
        rows.extend(flat(vb.get((out, inp), "weight")?)?);
        b.extend(flat(vb.get(out, "bias")?)?);
    }
    let mut w = Vec::with_capacity(rows.len());
    for first in (0..total).step_by(BLOCK) {
        for k in 0..inp {
            w.extend((first..first + BLOCK).map(|j| rows[j * inp + k]));
        }
    }
    Ok(Dense {
        w,
        b,
        inp,
        out: total,
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
            linear(&x, n, &l.qkv, None, &mut qkv);
            attention(&qkv, n, h, self.heads, &mut ctx);
            linear(&ctx, n, &l.attention_out, None, &mut a);
            add(&mut a, &x);
            layer_norm(&mut a, &l.attention_norm);
            linear(&a, n, &l.intermediate, Some(gelu), &mut inter);
            linear(&inter, n, &l.output, None, &mut x);
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

/// `y = act(x·Wᵀ + b)` for `n` rows of `x`; `y` is resized to `n × d.out`. Wide products
/// split their outputs in two halves, one per task; the bias and the activation are
/// applied by the task that made the outputs (GELU's error function is a fifth of a
/// query's time when it runs on one thread).
fn linear(x: &[f32], n: usize, d: &Dense, act: Option<fn(f32) -> f32>, y: &mut Vec<f32>) {
    let inp = d.inp;
    let part = |lo: usize, outs: usize| {
        let mut out = vec![0f32; n * outs];
        let w = &d.w[lo * inp..][..outs * inp];
        pulp::Arch::new().dispatch(Products {
            x,
            n,
            inp,
            w,
            out: &mut out,
        });
        for row in out.chunks_exact_mut(outs) {
            let bias = &d.b[lo..][..outs];
            match act {
                Some(f) => row.iter_mut().zip(bias).for_each(|(v, b)| *v = f(*v + b)),
                None => row.iter_mut().zip(bias).for_each(|(v, b)| *v += b),
            }
        }
        out
    };
    y.clear();
    if n * d.out * inp > SPLIT_WORK {
        let half = d.out / 2;
        let (a, b) = rayon::join(|| part(0, half), || part(half, half));
        for (ra, rb) in a.chunks_exact(half).zip(b.chunks_exact(half)) {
            y.extend_from_slice(ra);
            y.extend_from_slice(rb);
        }
    } else {
        *y = part(0, d.out);
    }
}

/// `out[i][j] = x_i · w_j` for every token `i` (`inp` wide) and output `j` of the packed
/// weights `w` ([`Dense`]), `out` row-major (`n × outs`). Blocks of [`ROWS`] tokens by two
/// vectors of outputs: each step broadcasts one input of each token and multiplies it
/// into the two vectors of that input's weights, so the sums stay in registers, need no
/// horizontal addition, and do not wait on each other; a block of weights is read in
/// order and used for every token while it is in the first-level cache.
struct Products<'a> {
    x: &'a [f32],
    n: usize,
    inp: usize,
    w: &'a [f32],
    out: &'a mut [f32],
}

/// Outputs per packed block of weights: two AVX2 vectors of f32.
const BLOCK: usize = 16;
const ROWS: usize = 4;

impl pulp::WithSimd for Products<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        let Products { x, n, inp, w, out } = self;
        let outs = out.len() / n;
        let lanes = S::F32_LANES;
        // vectors per packed row of BLOCK outputs; pairs of them are computed together
        let per = BLOCK / lanes;
        for blk in 0..outs / BLOCK {
            let wv = S::as_simd_f32s(&w[blk * inp * BLOCK..][..inp * BLOCK]).0;
            let mut sub = 0;
            while sub < per {
                let pair = usize::from(sub + 1 < per) + 1;
                let col = blk * BLOCK + sub * lanes;
                let mut i = 0;
                while i + ROWS <= n {
                    let acc: [[S::f32s; 2]; ROWS] = block(simd, x, inp, i, wv, per, sub, pair);
                    for (r, a) in acc.iter().enumerate() {
                        store::<S>(&mut out[(i + r) * outs + col..], a, pair, lanes);
                    }
                    i += ROWS;
                }
                for i in i..n {
                    let [a]: [[S::f32s; 2]; 1] = block(simd, x, inp, i, wv, per, sub, pair);
                    store::<S>(&mut out[i * outs + col..], &a, pair, lanes);
                }
                sub += pair;
            }
        }
    }
}

/// The sums of `R` tokens from `first` against `pair` (1 or 2) vectors of outputs from
/// vector `sub` of each packed row (the second sum is zero when `pair` is 1).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn block<S: pulp::Simd, const R: usize>(
    simd: S,
    x: &[f32],
    inp: usize,
    first: usize,
    wv: &[S::f32s],
    per: usize,
    sub: usize,
    pair: usize,
) -> [[S::f32s; 2]; R] {
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; 2]; R];
    let xs: [&[f32]; R] = std::array::from_fn(|r| &x[(first + r) * inp..][..inp]);
    for k in 0..inp {
        let w0 = wv[k * per + sub];
        let w1 = if pair == 2 {
            wv[k * per + sub + 1]
        } else {
            zero
        };
        for r in 0..R {
            let xv = simd.splat_f32s(xs[r][k]);
            acc[r][0] = simd.mul_add_f32s(xv, w0, acc[r][0]);
            acc[r][1] = simd.mul_add_f32s(xv, w1, acc[r][1]);
        }
    }
    acc
}

#[inline(always)]
fn store<S: pulp::Simd>(out: &mut [f32], acc: &[S::f32s; 2], pair: usize, lanes: usize) {
    let (v, _) = S::as_mut_simd_f32s(&mut out[..pair * lanes]);
    v.copy_from_slice(&acc[..pair]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pulp::Simd;

    /// Weights packed as [`dense`] packs them, from row-major `[out][inp]`.
    fn pack(rows: &[f32], inp: usize, out: usize) -> Vec<f32> {
        let mut w = Vec::new();
        for first in (0..out).step_by(BLOCK) {
            for k in 0..inp {
                w.extend((first..first + BLOCK).map(|j| rows[j * inp + k]));
            }
        }
        w
    }

    /// The products on this CPU's vectors and on plain scalars both equal the naive
    /// sums, for every count of tokens around a block of [`ROWS`].
    #[test]
    fn the_packed_products_equal_the_naive_sums() {
        let (inp, out) = (24, 2 * BLOCK);
        let rows: Vec<f32> = (0..inp * out).map(|i| (i as f32 * 0.37).sin()).collect();
        let w = pack(&rows, inp, out);
        for n in 1..=2 * ROWS + 1 {
            let x: Vec<f32> = (0..n * inp).map(|i| (i as f32 * 0.11).cos()).collect();
            let mut want = vec![0f32; n * out];
            for i in 0..n {
                for j in 0..out {
                    want[i * out + j] = (0..inp).map(|k| x[i * inp + k] * rows[j * inp + k]).sum();
                }
            }
            let (mut here, mut scalar) = (vec![0f32; n * out], vec![0f32; n * out]);
            pulp::Arch::new().dispatch(Products {
                x: &x,
                n,
                inp,
                w: &w,
                out: &mut here,
            });
            pulp::Scalar::new().vectorize(Products {
                x: &x,
                n,
                inp,
                w: &w,
                out: &mut scalar,
            });
            for (got, label) in [(&here, "vectors"), (&scalar, "scalars")] {
                for (g, e) in got.iter().zip(&want) {
                    assert!(
                        (g - e).abs() < 1e-4,
                        "{n} tokens on {label}: {g} against {e}"
                    );
                }
            }
        }
    }
}
