/**
 * The lifecycle record of a request split into a prefill and a decode half (reference ParentRequest). Phase
 * timestamps are µs; 0 = not reached. `completionTime` is stamped on success (cluster clock at decode completion
 * + the decode pod's post-decode overhead, INV-PD-6b), on a drop at transfer start or end, and on a decode
 * timeout.
 */
import { PdPart, Request, type RequestState } from '../../domain/request.js';

export class PdParent {
  readonly prefill: Request;
  /** The decode half: set when its KV is reserved on the decode pod; null before and after a drop. */
  decode: Request | null = null;
  readonly numKVBlocks: number;
  prefillEnqueueTime = 0;
  prefillCompleteTime = 0;
  /** Corrected semantics: the end of the step that finished the prefill half (0 = not yet). */
  prefillStepEnd = 0;
  transferStartTime = 0;
  transferCompleteTime = 0;
  decodeEnqueueTime = 0;
  completionTime = 0;
  /** Instance indexes (-1 = not chosen yet). */
  prefillIndex = -1;
  decodeIndex: number;
  /** E/P/D: the encode pod the request was routed to (-1 = the encode stage did not run for it). */
  encodeIndex = -1;
  /** Corrected semantics: its encode job is still running (the prefill is routed when it ends). */
  encodePending = false;
  /** Dropped at transfer start or end (the decode pod could not take the KV). */
  dropped = false;
  /** How the request ended: Completed or TimedOut (a half timed out or was killed); null = neither. */
  finalState: RequestState | null = null;
  /** Prefill blocks still held for the transfer (single-ownership mode): released when it ends. */
  heldOnPrefill = false;

  constructor(
    readonly req: Request,
    blockSize: number,
    decodeIndex: number,
    /** Corrected semantics (A5): both halves carry the parent's LoRA adapter. */
    private readonly keepAdapter = false,
  ) {
    this.numKVBlocks = Math.floor((req.inputLen + blockSize - 1) / blockSize);
    this.decodeIndex = decodeIndex;
    this.prefill = subRequest(req, `${req.id}_prefill`, PdPart.Prefill, keepAdapter);
  }

  get id(): string {
    return this.req.id;
  }

  /** The decode half, sharing the parent's tokens (made when the transfer starts). */
  makeDecode(): Request {
    return subRequest(this.req, `${this.req.id}_decode`, PdPart.Decode, this.keepAdapter);
  }
}

/**
 * A half of `req`: same input, deadline, tenant, class and model, arriving at the parent's arrival time. The
 * prefill half has no output tokens (it completes after its prefill) but keeps the client budget for the
 * enqueue guards; the decode half has the full output. The reference builds both without the LoRA adapter.
 */
function subRequest(req: Request, id: string, part: PdPart, keepAdapter: boolean): Request {
  // The halves hold the parent's token arrays: neither they nor the parent give them back for reuse.
  req.ownsTokens = false;
  const out = part === PdPart.Prefill ? EMPTY_TOKENS : req.outputTokens;
  const r = new Request(id, req.inputTokens, out, req.arrivalTime, req.maxOutputLen, req.deadline);
  r.pdPart = part;
  r.tenantId = req.tenantId;
  r.sloClass = req.sloClass;
  r.model = req.model;
  if (keepAdapter) r.adapter = req.adapter;
  r.prefixGroup = req.prefixGroup;
  r.hasPolicyPriority = req.hasPolicyPriority;
  r.policyPriority = req.policyPriority;
  r.schedulingHints = req.schedulingHints;
  // Same tokens, same block hashes: reuse the parent's cached chain instead of hashing the prompt again.
  r.inputBlockHashes = req.inputBlockHashes;
  r.inputHashBlockSize = req.inputHashBlockSize;
  return r;
}

const EMPTY_TOKENS = new Int32Array(0);
