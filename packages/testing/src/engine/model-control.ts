/**
 * Which models of the repository are loaded: all of them (Triton's default), or those loaded and
 * unloaded on request (`--model-control-mode=explicit`), with the side effects Triton 2.51 has.
 */
import { TritonError } from '../errors.js';
import { MODEL_VERSION, type ModelDef } from '../models/repository.js';

/** One model of the repository index, as Triton lists it. */
export interface IndexEntry {
  readonly name: string;
  readonly version?: string;
  readonly state?: string;
  readonly reason?: string;
}

export class ModelControl {
  /** The models served now: every lookup of the engine reads this map. */
  readonly loaded = new Map<string, ModelDef>();
  /** Loaded once and unloaded since: Triton lists them UNAVAILABLE and says they have no versions. */
  private readonly unloaded = new Set<string>();
  /** Ensembles unloaded because a model they compose was: Triton loads them again with it. */
  private readonly cascaded = new Set<string>();
  /** Whether load and unload are taken (`--model-control-mode=explicit`) or refused. */
  readonly explicit: boolean;

  /**
   * `loadAtStart` undefined: every model is served and load / unload are refused (Triton's default
   * mode); otherwise explicit control, with these models ('*': all) loaded at start.
   */
  constructor(
    private readonly repository: ReadonlyMap<string, ModelDef>,
    loadAtStart: readonly string[] | undefined,
  ) {
    this.explicit = loadAtStart !== undefined;
    if (loadAtStart === undefined || loadAtStart.includes('*')) {
      for (const [name, model] of repository) this.loaded.set(name, model);
      return;
    }
    for (const name of loadAtStart) {
      if (!repository.has(name)) {
        const known = [...repository.keys()].join(', ');
        throw new TypeError(
          `startFakeTriton: loadModels names '${name}', which the fake does not have (${known})`,
        );
      }
      this.load(name);
    }
  }

  /** Whether `name` was served and is not any more (Triton's "has no available versions"). */
  wasUnloaded(name: string): boolean {
    return this.unloaded.has(name);
  }

  /** A model of the repository, served or not. */
  defined(name: string): ModelDef | undefined {
    return this.repository.get(name);
  }

  /** The repository index in name order: a model never loaded is listed by name only. */
  index(): IndexEntry[] {
    return [...this.repository.keys()].sort().map((name) => {
      if (this.loaded.has(name)) return { name, version: MODEL_VERSION, state: 'READY' };
      if (this.unloaded.has(name))
        return { name, version: MODEL_VERSION, state: 'UNAVAILABLE', reason: 'unloaded' };
      return { name };
    });
  }

  /** Loads `name` and, for an ensemble, the models it composes; ensembles unloaded with it come back. */
  load(name: string): void {
    const model = this.repository.get(name);
    if (model === undefined) {
      throw new TritonError('INTERNAL', `failed to load '${name}', failed to poll from model repository`);
    }
    this.cascaded.delete(name);
    for (const step of model.ensembleSteps ?? []) {
      if (!this.loaded.has(step.model_name)) this.load(step.model_name);
    }
    this.loaded.set(name, model);
    this.unloaded.delete(name);
    for (const ensemble of [...this.cascaded]) {
      if (!this.cascaded.has(ensemble)) continue; // brought back by a load above
      const steps = this.repository.get(ensemble)?.ensembleSteps ?? [];
      if (steps.every((s) => this.loaded.has(s.model_name))) this.load(ensemble);
    }
  }

  /**
   * Unloads `name` (a model not loaded, or unknown, is no error: Triton answers 200) and every
   * loaded ensemble that composes it. A BLS model stays: Triton cannot know which models it calls.
   */
  unload(name: string): void {
    if (!this.loaded.delete(name)) return;
    this.unloaded.add(name);
    for (const [other, model] of [...this.loaded]) {
      if (model.ensembleSteps?.some((s) => s.model_name === name)) {
        this.unload(other);
        this.cascaded.add(other);
      }
    }
  }
}
