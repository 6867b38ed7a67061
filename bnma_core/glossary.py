"""The terms BNMA Studio uses, in plain language with their formulas (one home: the dashboard's
Glossary page shows them; ``docs/DESIGN.md`` gives the full notation)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    name: str
    plain: str
    formula: str = ""


TERMS: tuple[Term, ...] = (
    Term("Bayesian network",
         "A picture of which variables depend directly on which: an arrow from A to B says B's "
         "chances depend on A. Together with a table of probabilities for each variable given "
         "its parents, it describes how all variables vary together.",
         r"$P(x_1, \dots, x_n) = \prod_i P(x_i \mid \mathrm{pa}_i)$"),
    Term("Structure (DAG)",
         "The arrows of a Bayesian network, without the numbers. They may not form a cycle "
         "(a directed acyclic graph, DAG)."),
    Term("Model averaging (BMA)",
         "Instead of trusting one structure, predict with many, each weighted by how well it "
         "explains the data. This is more honest when the data cannot single out one "
         "structure, which is the usual case with few rows.",
         r"$P(c \mid x, D) = \sum_G P(c \mid x, G, D)\, P(G \mid D)$"),
    Term("Node order",
         "A ranking of the variables in which every arrow points from an earlier to a later "
         "variable. Fixing an order makes averaging over all structures consistent with it "
         "exact and cheap (Dash & Cooper 2004); order MCMC samples orders "
         "(Hwang & Zhang 2005).",
         r"$P(G \mid D, \prec) \propto \prod_i \rho(\mathrm{pa}_i)\, "
         r"ML(x_i \mid \mathrm{pa}_i)$ with $\mathrm{pa}_i \subseteq "
         r"\mathrm{pred}_\prec(i)$"),
    Term("Order MCMC",
         "A random walk over orders: propose swapping two variables, accept the swap with a "
         "probability that favours orders explaining the data better. After a burn-in, the "
         "orders visited are samples from their posterior.",
         r"accept with $\min\{1,\; P(\prec' \mid D) / P(\prec \mid D)\}$"),
    Term("Burn-in",
         "The first steps of a chain, thrown away while it climbs from its random start to "
         "plausible orders."),
    Term("R-hat (split R-hat)",
         "Compares the chains (and the two halves of each) after replacing every draw by its "
         "rank among all chains (rank-normalised R-hat, as ArviZ computes it): near 1 when "
         "they agree. Above 1.01 the chains have not mixed: run them longer, or more of them "
         "(at least 4), before trusting the averages.",
         r"$\hat R = \sqrt{\big(\tfrac{N-1}{N} W + \tfrac{B}{N}\big) / W}$ on the "
         r"rank-normalised draws $z = \Phi^{-1}\big((r - 3/8) / (S + 1/4)\big)$ of the "
         r"split chains, and on their folded version $|\theta - \mathrm{median}|$; the "
         r"larger of the two. $W$ within-, $B$ between-chain variance, $N$ draws per half "
         r"chain (Vehtari et al. 2021)"),
    Term("Effective sample size (ESS)",
         "How many independent draws the correlated draws of the chains are worth. Bulk ESS "
         "judges the centre of the distribution, tail ESS its 5 % and 95 % quantiles; at "
         "least 400 before trusting a summary.",
         r"$\mathrm{ESS} = N M / \hat\tau$, $\hat\tau = 1 + 2 \sum_t \hat\rho_t$ "
         r"(Geyer's initial monotone sequence; Vehtari et al. 2021)"),
    Term("Structural Hamming distance (SHD)",
         "How far a learned network is from the true one: the number of pairs of variables "
         "whose arc is missing, extra or reversed.",
         "Tsamardinos, Brown & Aliferis (2006)"),
    Term("Spearman rank correlation",
         "How similar two orders are: 1 identical, 0 unrelated, -1 reversed.",
         r"$\rho = 1 - \frac{6 \sum_v d_v^2}{n (n^2 - 1)}$, $d_v$ the difference of "
         r"positions of variable $v$"),
    Term("Edge posterior",
         "The probability that an arrow is in the true structure, given the data: the share "
         "of the averaged structures' weight that contains it.",
         r"$P(Y \to X \mid D) = \sum_{G \ni Y \to X} P(G \mid D)$"),
    Term("Markov blanket",
         "The class's parents, children and the children's other parents: the variables "
         "that matter for predicting the class once they are known."),
    Term("Equivalence class (CPDAG)",
         "Structures that no data can tell apart: same connections (skeleton) and same "
         "'colliders' A -> C <- B. A CPDAG draws the class with undirected lines where the "
         "direction is not determined by the data.",
         "Two DAGs are Markov equivalent iff they share skeleton and v-structures "
         "(Verma & Pearl 1990); CPDAG by Chickering's / Meek's rules."),
    Term("Marginal likelihood (K2, BDeu)",
         "How probable the data are under a structure, averaging over all its probability "
         "tables. K2 gives every table entry a prior count of 1; BDeu spreads one "
         "'equivalent sample' over each table.",
         r"$\log ML = \sum_j \big[\ln\Gamma(\alpha_{ij}) - \ln\Gamma(\alpha_{ij} + N_{ij})"
         r"\big] + \sum_{jk} \big[\ln\Gamma(\alpha_{ijk} + N_{ijk}) - "
         r"\ln\Gamma(\alpha_{ijk})\big]$; K2: $\alpha_{ijk} = 1$; BDeu: "
         r"$\alpha_{ijk} = \alpha / (r_i q_i)$"),
    Term("Mutual information (MI, CMI)",
         "How much knowing one variable tells about another (MI), or about another once the "
         "class is known (conditional MI, CMI). Used to choose the dependencies of TAN, KDB "
         "and UKDB.",
         r"$I(X; Y \mid C) = \sum_{x,y,c} P(x,y,c) \log \frac{P(x,y \mid c)}"
         r"{P(x \mid c) P(y \mid c)}$"),
    Term("Local MI (LMI, CLMI)",
         "The part of the (conditional) mutual information that one observed value "
         "contributes: UKDB_P builds a network for each patient from these.",
         r"$I(x; C) = \sum_c P(x, c) \log \frac{P(x, c)}{P(x) P(c)}$, summed over $x$ it "
         r"gives $I(X; C)$"),
    Term("Missing value",
         "A cell with no value. BNMA Studio treats it as unknown, never as a state: methods "
         "learn from the values present (available-case counts or EM) and, when predicting, "
         "average over what the missing value could have been (marginalisation). The tables "
         "show it as 'missing'."),
    Term("Held-out accuracy, AUC, log-loss",
         "Accuracy: the share of held-out cases classified correctly. AUC: the chance that a "
         "random positive case gets a higher score than a random negative one. Log-loss: how "
         "surprised the model is by the true classes (lower is better)."),
    Term("Structure interval",
         "How much the averaged networks disagree about one patient: the range that holds the "
         "middle 90 % of the networks' own probabilities, each network counted by its weight. "
         "A narrow range means the networks agree; a range reaching 0.5 means the decision "
         "depends on which network is right. Drawing each network's probability tables from "
         "what the data allow widens it into the interval with parameter uncertainty.",
         r"weighted 5 % and 95 % quantiles of $P(c \mid x, m)$ under the weights "
         r"$\pi_m(x)$ (DESIGN §15)"),
    Term("Shapley value (contribution of a finding)",
         "How much one finding moves the odds of the predicted class, shared out fairly: the "
         "finding's effect is averaged over every order in which the findings could have been "
         "learned, a finding not yet learned counting as unknown. The contributions add up "
         "from 'nothing known' to 'this case' (Shapley 1953; Štrumbelj & Kononenko 2014).",
         r"$\varphi_i = \sum_{S \subseteq F \setminus \{i\}} \frac{|S|!(N-|S|-1)!}{N!}"
         r"[v(S \cup \{i\}) - v(S)]$, $v(S)$ the log-odds given the findings $S$"),
    Term("Value of information (which test next)",
         "For a finding not yet known: how much learning it would reduce the uncertainty "
         "about the class, on average over what it could turn out to be (Howard 1966). A "
         "test worth doing removes much uncertainty or has a real chance of changing the "
         "decision.",
         r"$\mathrm{VOI}_j = H(C \mid x) - \sum_v P(v \mid x)\, H(C \mid x, v)$"),
    Term("Conflict measure (unusual case)",
         "Whether a patient's findings fit together: positive when the combination is less "
         "probable than the findings would be if unrelated, a sign of an unusual case, a "
         "recording error or a situation the training data do not cover (Jensen, "
         "Chamberlain, Nordahl & Jensen 1991). The page also says how many training cases "
         "were more probable than this one.",
         r"$\mathrm{conf}(x) = \sum_i \log P(x_i) - \log P(x)$"),
)
