//! A compact limited-memory BFGS minimiser (Nocedal & Wright, *Numerical Optimization*,
//! Algorithm 7.4 two-loop recursion, with a backtracking Armijo line search).
//!
//! Written here rather than taken from `argmin`: our objectives are plain `&[f64]` closures
//! over half a million parameters, and a self-contained 100 lines avoided pulling argmin and a
//! math backend into a 2-core build; the gradient check in `crf.rs` and the toy problems below
//! test it. Memory: `2 · memory + 4` vectors of the parameter length.

/// Limits of one minimisation, with defaults.
#[derive(Debug, Clone, Copy)]
pub struct LbfgsOptions {
    /// Correction pairs kept (default 6).
    pub memory: usize,
    /// Iterations at most (default 150).
    pub max_iter: usize,
    /// Stop when the objective falls by less than this share over 3 iterations (default 1e-5).
    pub tolerance: f64,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions { memory: 6, max_iter: 150, tolerance: 1e-5 }
    }
}

/// How a minimisation ended.
#[derive(Debug, Clone, Copy, Default)]
pub struct LbfgsReport {
    pub iterations: usize,
    pub evaluations: usize,
    pub value: f64,
    pub converged: bool,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Minimises `f` from `x` (updated in place). `f(x, grad)` returns the value and writes the
/// gradient (grad arrives zeroed).
pub fn minimize(x: &mut [f64], f: &mut dyn FnMut(&[f64], &mut [f64]) -> f64, o: &LbfgsOptions) -> LbfgsReport {
    let n = x.len();
    let mut g = vec![0.0; n];
    let mut value = f(x, &mut g);
    let mut evaluations = 1;
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    let mut rho: Vec<f64> = Vec::new();
    let mut d = vec![0.0; n];
    let mut x_new = vec![0.0; n];
    let mut g_new = vec![0.0; n];
    let mut history = vec![value];
    let mut alpha_buf = Vec::new();
    for iter in 0..o.max_iter {
        // Two-loop recursion: d = −H·g.
        d.copy_from_slice(&g);
        alpha_buf.clear();
        for k in (0..s_hist.len()).rev() {
            let a = rho[k] * dot(&s_hist[k], &d);
            alpha_buf.push(a);
            d.iter_mut().zip(&y_hist[k]).for_each(|(di, yi)| *di -= a * yi);
        }
        let gamma = match (s_hist.last(), y_hist.last()) {
            (Some(s), Some(y)) => dot(s, y) / dot(y, y),
            _ => 1.0 / dot(&g, &g).sqrt().max(1e-12),
        };
        d.iter_mut().for_each(|v| *v *= gamma);
        for (k, a) in (0..s_hist.len()).zip(alpha_buf.iter().rev()) {
            let b = rho[k] * dot(&y_hist[k], &d);
            d.iter_mut().zip(&s_hist[k]).for_each(|(di, si)| *di += si * (a - b));
        }
        d.iter_mut().for_each(|v| *v = -*v);
        let mut slope = dot(&g, &d);
        if slope >= 0.0 {
            // Not a descent direction (curvature information went stale): restart from −g.
            s_hist.clear();
            y_hist.clear();
            rho.clear();
            let scale = 1.0 / dot(&g, &g).sqrt().max(1e-12);
            d.iter_mut().zip(&g).for_each(|(di, gi)| *di = -gi * scale);
            slope = dot(&g, &d);
        }
        // Backtracking line search (Armijo, c = 1e-4).
        let mut step = 1.0;
        let mut accepted = false;
        for _ in 0..40 {
            x_new.iter_mut().zip(x.iter().zip(&d)).for_each(|(xn, (xi, di))| *xn = xi + step * di);
            g_new.iter_mut().for_each(|v| *v = 0.0);
            let v = f(&x_new, &mut g_new);
            evaluations += 1;
            if v.is_finite() && v <= value + 1e-4 * step * slope {
                value = v;
                accepted = true;
                break;
            }
            step *= 0.5;
        }
        if !accepted {
            return LbfgsReport { iterations: iter, evaluations, value, converged: true };
        }
        let s: Vec<f64> = x_new.iter().zip(x.iter()).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = g_new.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        x.copy_from_slice(&x_new);
        std::mem::swap(&mut g, &mut g_new);
        if sy > 1e-12 {
            if s_hist.len() == o.memory {
                s_hist.remove(0);
                y_hist.remove(0);
                rho.remove(0);
            }
            rho.push(1.0 / sy);
            s_hist.push(s);
            y_hist.push(y);
        }
        history.push(value);
        if history.len() > 3 {
            let old = history[history.len() - 4];
            if (old - value) <= o.tolerance * old.abs().max(1.0) {
                return LbfgsReport { iterations: iter + 1, evaluations, value, converged: true };
            }
        }
    }
    LbfgsReport { iterations: o.max_iter, evaluations, value, converged: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimises_rosenbrock_and_a_quadratic() {
        let mut x = vec![-1.2, 1.0];
        let mut rosen = |x: &[f64], g: &mut [f64]| {
            let (a, b) = (x[0], x[1]);
            g[0] = -2.0 * (1.0 - a) - 400.0 * a * (b - a * a);
            g[1] = 200.0 * (b - a * a);
            (1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2)
        };
        let r = minimize(&mut x, &mut rosen, &LbfgsOptions { max_iter: 500, tolerance: 1e-14, ..Default::default() });
        assert!((x[0] - 1.0).abs() < 1e-3 && (x[1] - 1.0).abs() < 1e-3, "{x:?} {r:?}");
        let mut q = vec![5.0; 50];
        let mut quad = |x: &[f64], g: &mut [f64]| {
            let mut v = 0.0;
            for (i, (xi, gi)) in x.iter().zip(g.iter_mut()).enumerate() {
                let c = (i + 1) as f64;
                v += c * (xi - 1.0).powi(2);
                *gi = 2.0 * c * (xi - 1.0);
            }
            v
        };
        minimize(&mut q, &mut quad, &LbfgsOptions { tolerance: 1e-14, ..Default::default() });
        assert!(q.iter().all(|v| (v - 1.0).abs() < 1e-4), "{q:?}");
    }
}
