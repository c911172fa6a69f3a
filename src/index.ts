/**
 * blis-ts public library API. `simulate(config)` is the one-call entry point (same options as the CLI);
 * the lower-level pieces are exported for embedding (policy search loops, custom drivers).
 */
export { simulate, parseSimulationConfig, simulationConfigSchema } from './sim/simulate.js';
export type {
  SimulationConfig,
  RunConfig,
  ReplayConfig,
  SimulationOptions,
  SimulationOutputsRequest,
  SimulationResult,
  SimulationReport,
  SimulationMetrics,
  ClassGoodput,
  AdapterMetrics,
  AnomalyCounters,
  KvCacheMetrics,
  SimulationProgress,
  SimulateOptions,
} from './sim/library-types.js';
export type {
  PerSloMetrics,
  SloClassMetrics,
  PerModelMetrics,
  ModelMetricsData,
  PerTenantMetrics,
  TenantMetricsData,
  SessionMetricsData,
  PdMetrics,
  LatencyStat,
  LatencyStatsMs,
  SampleCount,
} from './metrics/section-data.js';
export type { AutoscalerReport, ReplicaTimelinePoint, ScaleAction } from './sim/scaling-report.js';
export type {
  FitnessSection,
  TraceSummarySection,
  PolicySection,
  ControlPointDescription,
  AdmissionDelaysSection,
  KvTiersSection,
  KvTiersJson,
  KvTierFiguresJson,
  KvTierTransfersJson,
  PolicyAnomaliesSection,
  AnomalyEventJson,
  TraceSection,
  TraceAdmission,
  TraceRouting,
  TraceKvTierTransfer,
} from './sim/report-sections.js';
export { BlisError, isBlisError } from './domain/errors.js';
export { ConfigError } from './sim/config-error.js';
export { FLAGS as SIMULATION_OPTIONS, type FlagSpec as SimulationOption } from './sim/options.js';
export { buildCluster, runEngine, type EngineSetup, type PolicySetup, DEFAULT_POLICY_SETUP } from './sim/engine-setup.js';
export { buildReport, renderJson, renderReferenceText, type Report, type ReportOptions } from './sim/report.js';
export { ClusterSimulator, type FollowUpHook } from './cluster/cluster.js';
export { TimeSeriesSampler, SERIES_NAMES, type TimeSeriesData, type InstanceSeries, type SeriesProbe, type SeriesColumn, type SeriesKind } from './cluster/timeseries.js';
export { formatTimeSeries, type TimeSeriesFormat } from './sim/timeseries.js';
export type { SimProgress, ProgressCallback } from './sim/engine-setup.js';
export type { ReportData } from './sim/report-data.js';
// Reports: `renderRunReport(runView(result.report, 'label'))` draws a `simulate({..., reportData: true})` result.
export {
  runView,
  evaluationView,
  loadResult,
  renderRunReport,
  renderEvaluationReport,
  renderResultReport,
  compareResults,
  formatComparisonText,
  formatComparisonJson,
  renderComparisonReport,
  type ResultView,
  type RunView,
  type EvaluationView,
  type Comparison,
} from './report/index.js';
export {
  SessionManager,
  generateWorkload,
  checkSessionCausality,
  checkSessionCompleteness,
  type SessionBlueprint,
  type SessionLog,
  type SessionState,
  type SessionViolation,
  type SessionWorkload,
  type ToolCallSpec,
} from './workload/sessions/index.js';
export { Request, RequestState } from './domain/request.js';
export { SloPriorityMap } from './domain/slo.js';
export { makeRoutingPolicy, makeAdmissionPolicy } from './routing/registry.js';
export { routingSnapshot } from './routing/types.js';
export { GoRand } from './gocompat/go-rand.js';
export { PartitionedRng } from './engine/partitioned-rng.js';
export { MODEL_CATALOG } from './config/catalog/models.js';
export { GPU_CATALOG } from './config/catalog/hardware.js';
export { PolicyRuntimeError, PolicyConfigError, parsePolicyBundle, preparePolicies, FEATURES, TEMPLATES, CONTROL_POINTS, printTree } from './policy/index.js';
export type { ControlPoint, EvolvablePolicies, PolicyMetadata, PolicySpec, PreparedPolicies, BuiltPolicies } from './policy/index.js';
export { policyCatalog } from './policy/catalog.js';
export { exportLlmd, LLMD_API_VERSIONS, LLMD_SCORERS, PolicyExportError } from './policy/export-llmd.js';
export type { LlmdExport, LlmdExportOptions } from './policy/export-llmd.js';
export { SandboxError, loadSandboxEngine, DEFAULT_SANDBOX_LIMITS, type SandboxEngine, type SandboxProgram, type SandboxLimits } from './sandbox/index.js';
export type { AdmissionPolicy, PriorityPolicy, RoutingPolicy, RouterState, RouterSignals } from './routing/types.js';
export type { AutoScalePolicy, AutoScaleContext, ScaleDecision } from './routing/autoscale.js';
export type { InstanceScheduler, SchedulerContext, BatchChoice } from './instance/scheduler.js';
export { fitAggregateRuns, type AggregateRun, type AggregateMeasurements, type AggregateFitOptions, type AggregateFitResult } from './fit/index.js';
export { parseLatencyProfile, formatLatencyProfile, type LatencyProfile } from './latency/profile.js';
export { CORRECTED_PHYSICS_COEFFICIENTS, CORRECTED_PHYSICS_DEFAULTS } from './latency/corrected-physics.js';
export {
  BLIS_VERSION, BUILTIN_SUITES, candidateFromBundle, candidateFromCode, candidateFromComponents, candidateHash, checkConstraints, checkSuite,
  describeSuites, estimate, evaluateCandidate, evaluatePopulation, findSuite, fixedControlPoints, holdoutSeedSet, knownPolicyCandidate,
  metricInfo, normalize, parseSuite, proveOnHoldout, Racer, rawMetrics, RAW_METRIC_NAMES, ResultCache, scoreRun, searchPolicies, searchSpace, seedSetSuite,
  seedsFor, withSemantics,
} from './evaluate/index.js';
export type {
  BaselineComparison, Candidate, Constraint, ConstraintCheck, Estimate, EvaluateHooks, EvaluateOptions, EvaluationError, EvaluationResult,
  HeldOutProof, KnownPolicy, Objective, PolicyFigures, RacingStats, RawMetrics, Scenario, ScenarioResult, SearchOptions, SearchResult, Stage, Suite, SuiteCheck,
} from './evaluate/index.js';
