# Reference values for eval/distribution_test.go, by direct quadrature with mpmath.
# Run: python3 distribution_ref.py (needs mpmath); prints mu sigma y NLL CRPS PIT [mean].
from mpmath import mp, mpf, quad, log, exp, sqrt, pi, erfc, inf, npdf, ncdf
mp.dps = 30
def ncdf_(x, m, s): return ncdf(x, mu=m, sigma=s)
rows_n = [(0,1,0),(10,2,13),(-2,0.5,-2.25)]
rows_l = [(0,1,1),(float(log(100)),0.25,120),(1,0.5,0.5),(0.5,0.8,-1)]
def crps_q(F, y, lo, hi):
    return quad(lambda z: F(z)**2, [lo, y]) + quad(lambda z: (1-F(z))**2, [y, hi])
print("normal")
for m,s,y in rows_n:
    F=lambda z: ncdf_(z,m,s)
    nll = -log(npdf(y, mu=m, sigma=s))
    c = crps_q(F, y, m-40*s, m+40*s)
    print(m,s,y, mp.nstr(nll,17), mp.nstr(c,17), mp.nstr(F(y),17))
print("lognormal")
for m,s,y in rows_l:
    F=lambda z: ncdf_(log(z),m,s) if z>0 else mpf(0)
    nll = -(log(npdf(log(y), mu=m, sigma=s)) - log(y)) if y>0 else inf
    lo = min(y, 0)
    c = quad(lambda z: F(z)**2, [lo, y]) if y>0 else 0
    if y > 0:
        c += quad(lambda u: (1-F(exp(u)))**2*exp(u), [log(y), m+40*s])
    else:
        c += (0 - y) + quad(lambda u: (1-F(exp(u)))**2*exp(u), [m-40*s, m+40*s])
    print(m,s,y, mp.nstr(nll,17), mp.nstr(c,17), mp.nstr(F(y),17), mp.nstr(exp(m+s*s/2),17))
